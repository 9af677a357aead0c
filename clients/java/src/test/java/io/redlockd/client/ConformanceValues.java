package io.redlockd.client;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The conformance scenarios' values (clients/conformance/README.md#values) and expectations
 * (#expectations): {run}, "$name.field" references, the repeat and numbered forms, and comparisons
 * of integers as BigIntegers (tokens and terms exactly, never through a double).
 */
final class ConformanceValues {
  /** What a step bound: its result's fields, and a set's members' (in order). */
  record Bound(Map<String, Object> fields, List<Map<String, Object>> members) {}

  final String prefix;
  final Map<String, Bound> bound = new HashMap<>();

  ConformanceValues(String prefix) {
    this.prefix = prefix;
  }

  @SuppressWarnings("unchecked")
  Object resolve(Object v) {
    if (v instanceof String s) {
      return s.startsWith("$") ? reference(s.substring(1)) : s.replace("{run}", prefix);
    }
    if (v instanceof List<?> list) {
      List<Object> out = new ArrayList<>();
      list.forEach(e -> out.add(resolve(e)));
      return out;
    }
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> map = (Map<String, Object>) m;
      if (map.get("repeat") instanceof String text) {
        return text.repeat(((BigInteger) map.get("times")).intValueExact());
      }
      if (map.containsKey("numbered")) {
        String text = (String) resolve(map.get("numbered"));
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < ((BigInteger) map.get("count")).intValueExact(); i++) {
          out.add(text + i);
        }
        return out;
      }
      Map<String, Object> out = new LinkedHashMap<>();
      map.forEach((k, e) -> out.put(k, resolve(e)));
      return out;
    }
    return v;
  }

  /** "a.token" (a bound result's field) or "s.1.token" (a set member's). */
  private Object reference(String path) {
    String[] parts = path.split("\\.");
    Bound b = bound.get(parts[0]);
    if (b == null) {
      return "<nothing bound as " + parts[0] + ">";
    }
    Map<String, Object> fields = b.fields();
    if (parts.length == 3) {
      int i = Integer.parseInt(parts[1]);
      if (i >= b.members().size()) {
        return "<" + parts[0] + " has no member " + i + ">";
      }
      fields = b.members().get(i);
    }
    String field = parts[parts.length - 1];
    return fields.containsKey(field) ? fields.get(field) : "<" + path + ": no " + field + ">";
  }

  /** v as an exact integer, or null when it is none. */
  static BigInteger integer(Object v) {
    if (v instanceof BigInteger n) {
      return n;
    }
    if (v instanceof Number n) {
      return BigInteger.valueOf(n.longValue());
    }
    if (v instanceof FencingToken t) {
      return t.toBigInteger();
    }
    if (v instanceof String s && s.matches("-?\\d+")) {
      return new BigInteger(s);
    }
    return null;
  }

  /** Why {@code got} does not meet {@code expect}, or null when it does. */
  String unmet(Map<String, Object> got, Map<String, Object> expect) {
    for (Map.Entry<String, Object> e : expect.entrySet()) {
      if (!got.containsKey(e.getKey())) {
        return "the result has no " + e.getKey() + " (expected " + resolve(e.getValue()) + ")";
      }
      String why = mismatch(got.get(e.getKey()), e.getValue());
      if (why != null) {
        return e.getKey() + ": " + why;
      }
    }
    return null;
  }

  @SuppressWarnings("unchecked")
  private String mismatch(Object got, Object want) {
    if (want instanceof Map<?, ?> m && m.size() == 1) {
      Map.Entry<String, Object> only = ((Map<String, Object>) m).entrySet().iterator().next();
      Object operand = resolve(only.getValue());
      BigInteger x = integer(got);
      BigInteger y = integer(operand);
      if (x == null || y == null) {
        return got + " is not " + only.getKey() + " " + operand;
      }
      int c = x.compareTo(y);
      boolean holds =
          switch (only.getKey()) {
            case "gt" -> c > 0;
            case "ge" -> c >= 0;
            case "lt" -> c < 0;
            case "le" -> c <= 0;
            case "ne" -> c != 0;
            default -> false;
          };
      return holds ? null : got + " is not " + only.getKey() + " " + operand;
    }
    if (want instanceof List<?> list) {
      if (!(got instanceof List<?> items) || items.size() != list.size()) {
        return got + " does not have the " + list.size() + " elements expected";
      }
      for (int i = 0; i < list.size(); i++) {
        String why = mismatch(items.get(i), list.get(i));
        if (why != null) {
          return "[" + i + "]: " + why;
        }
      }
      return null;
    }
    Object resolved = resolve(want);
    BigInteger x = integer(got);
    BigInteger y = integer(resolved);
    boolean equal =
        x != null && y != null && !(got instanceof String && resolved instanceof String)
            ? x.equals(y)
            : String.valueOf(got).equals(String.valueOf(resolved))
                && (got == null) == (resolved == null)
                && (got instanceof Boolean) == (resolved instanceof Boolean);
    return equal ? null : "was " + got + ", expected " + resolved;
  }
}
