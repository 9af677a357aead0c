package io.redlockd.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS settings, as PEM: the CA to trust ({@code null}: the system's roots) and, for mutual TLS, a
 * client certificate chain and its private key (PKCS#8, as openssl writes it). {@link #toString()}
 * shows only which are set: the key is a secret.
 */
public final class Tls {
  final byte[] ca;
  final byte[] cert;
  final byte[] key;

  private Tls(byte[] ca, byte[] cert, byte[] key) {
    if ((cert == null) != (key == null)) {
      throw new InvalidArgumentException("invalid tls: cert and key must be given together");
    }
    this.ca = ca == null ? null : ca.clone();
    this.cert = cert == null ? null : cert.clone();
    this.key = key == null ? null : key.clone();
  }

  /** TLS trusting the system's roots, without a client certificate. */
  public static Tls systemRoots() {
    return new Tls(null, null, null);
  }

  /** PEM bytes; {@code ca} may be null (the system's roots), {@code cert} and {@code key} together. */
  public static Tls fromPem(byte[] ca, byte[] cert, byte[] key) {
    return new Tls(ca, cert, key);
  }

  /**
   * Reads the PEM files; {@code ca} may be null (the system's roots), {@code cert} and {@code key}
   * together.
   */
  public static Tls fromFiles(Path ca, Path cert, Path key) {
    if ((cert == null) != (key == null)) {
      throw new InvalidArgumentException("invalid tls: cert and key must be given together");
    }
    return new Tls(read(ca, "ca"), read(cert, "cert"), read(key, "key"));
  }

  private static byte[] read(Path path, String field) {
    if (path == null) {
      return null;
    }
    try {
      return Files.readAllBytes(path);
    } catch (IOException e) {
      throw new InvalidArgumentException(
          "invalid tls: cannot read the " + field + " file " + path + ": " + e, e);
    }
  }

  @Override
  public String toString() {
    return "Tls(ca=" + (ca != null ? "set" : "system roots") + ", cert=" + (cert != null ? "set" : null)
        + ", key=" + (key != null ? "set" : null) + ")";
  }
}
