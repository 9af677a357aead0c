package io.redlockd.client;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough JSON for the conformance scenarios (no dependency for it): objects as Maps in their
 * order, arrays as Lists, integers as BigIntegers (exact at any size: never a double), other
 * numbers as BigDecimals, strings, booleans and null.
 */
final class Json {
  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  static Object parse(String text) {
    Json json = new Json(text);
    Object value = json.value();
    json.space();
    if (json.at != text.length()) {
      throw json.wrong("the end");
    }
    return value;
  }

  private IllegalArgumentException wrong(String expected) {
    return new IllegalArgumentException("JSON: expected " + expected + " at offset " + at);
  }

  private void space() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
      at++;
    }
  }

  private boolean eat(char c) {
    space();
    if (at < text.length() && text.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private Object value() {
    space();
    if (at >= text.length()) {
      throw wrong("a value");
    }
    char c = text.charAt(at);
    if (c == '{') {
      at++;
      Map<String, Object> object = new LinkedHashMap<>();
      if (eat('}')) {
        return object;
      }
      do {
        space();
        String key = string();
        if (!eat(':')) {
          throw wrong("':'");
        }
        object.put(key, value());
      } while (eat(','));
      if (!eat('}')) {
        throw wrong("'}'");
      }
      return object;
    }
    if (c == '[') {
      at++;
      List<Object> array = new ArrayList<>();
      if (eat(']')) {
        return array;
      }
      do {
        array.add(value());
      } while (eat(','));
      if (!eat(']')) {
        throw wrong("']'");
      }
      return array;
    }
    if (c == '"') {
      return string();
    }
    for (String word : new String[] {"true", "false", "null"}) {
      if (text.startsWith(word, at)) {
        at += word.length();
        return word.equals("null") ? null : Boolean.valueOf(word);
      }
    }
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
    String number = text.substring(start, at);
    if (number.isEmpty()) {
      throw wrong("a value");
    }
    return number.matches("-?\\d+") ? new BigInteger(number) : new BigDecimal(number);
  }

  private String string() {
    if (at >= text.length() || text.charAt(at) != '"') {
      throw wrong("a string");
    }
    StringBuilder out = new StringBuilder();
    for (at++; at < text.length(); at++) {
      char c = text.charAt(at);
      if (c == '"') {
        at++;
        return out.toString();
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char e = text.charAt(++at);
      switch (e) {
        case 'n' -> out.append('\n');
        case 't' -> out.append('\t');
        case 'r' -> out.append('\r');
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'u' -> {
          out.append((char) Integer.parseInt(text.substring(at + 1, at + 5), 16));
          at += 4;
        }
        default -> out.append(e); // \" \\ \/
      }
    }
    throw wrong("the end of a string");
  }
}
