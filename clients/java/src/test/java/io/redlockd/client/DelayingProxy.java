package io.redlockd.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A TCP proxy in front of the real daemon: the daemon's bytes reach the client {@code delay} after
 * they left the daemon, and after {@link #freeze()} not at all (the daemon seems silent).
 */
final class DelayingProxy implements AutoCloseable {
  private final String host;
  private final int port;
  private final long delayNanos;
  private final ServerSocket listener;
  private final List<Socket> sockets = new ArrayList<>();
  private volatile boolean frozen;
  final String addr;

  DelayingProxy(String target, Duration delay) throws IOException {
    int colon = target.lastIndexOf(':');
    this.host = target.substring(0, colon);
    this.port = Integer.parseInt(target.substring(colon + 1));
    this.delayNanos = delay.toNanos();
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.addr = "127.0.0.1:" + listener.getLocalPort();
    daemon(this::accept);
  }

  /** From now on the daemon's bytes are dropped. */
  void freeze() {
    frozen = true;
  }

  @Override
  public synchronized void close() throws IOException {
    listener.close();
    for (Socket s : sockets) {
      s.close();
    }
  }

  private static void daemon(Runnable body) {
    Thread t = new Thread(body, "delaying-proxy");
    t.setDaemon(true);
    t.start();
  }

  private void accept() {
    while (true) {
      try {
        Socket client = listener.accept();
        Socket upstream = new Socket(host, port);
        synchronized (this) {
          sockets.add(client);
          sockets.add(upstream);
        }
        pump(client, upstream, false);
        pump(upstream, client, true);
      } catch (IOException e) {
        return;
      }
    }
  }

  /** One direction: a reader that timestamps chunks, a writer that sends them when they are due. */
  private void pump(Socket source, Socket sink, boolean fromDaemon) {
    long delay = fromDaemon ? delayNanos : 0;
    BlockingQueue<Object[]> chunks = new LinkedBlockingQueue<>();
    daemon(() -> {
      byte[] buffer = new byte[65536];
      try (InputStream in = source.getInputStream()) {
        int n;
        while ((n = in.read(buffer)) > 0) {
          chunks.add(new Object[] {System.nanoTime(), Arrays.copyOf(buffer, n)});
        }
      } catch (IOException e) {
        // the end, as EOF
      }
      chunks.add(new Object[] {System.nanoTime(), new byte[0]});
    });
    daemon(() -> {
      try {
        OutputStream out = sink.getOutputStream();
        while (true) {
          Object[] chunk = chunks.take();
          long due = (long) chunk[0] + delay;
          long wait = due - System.nanoTime();
          if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
          }
          byte[] data = (byte[]) chunk[1];
          if (data.length == 0) {
            sink.shutdownOutput();
            return;
          }
          if (fromDaemon && frozen) {
            continue;
          }
          out.write(data);
          out.flush();
        }
      } catch (IOException | InterruptedException e) {
        // the sink is gone
      }
    });
  }
}
