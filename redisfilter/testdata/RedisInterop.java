/*
 * RedisInterop.java: the Guava side of TestJavaInterop
 * (redisfilter/interop_test.go).
 *
 * The Go test builds filters in Redis, writes what GET returned for each,
 * prefixed with Guava's 6-byte header, to <dir>/redis-<id>.bin, then compiles
 * this file against the Guava jar of the machine and runs it once as
 *
 *     java -cp <classes>:<guava.jar> RedisInterop <dir>
 *
 * <dir>/cases.txt holds, for each filter,
 *
 *     filter <id> <funnel> <strategyOrdinal> <expectedInsertions> <fppBits>
 *     i <value>          a value the Go side put in Redis, in order
 *     p <value>          a held-out value to probe with mightContain
 *     end
 *
 * fppBits is Double.doubleToRawLongBits in hex. Values are hex UTF-8 for
 * "string", hex for "bytes" and decimal for "long".
 *
 * For each filter it reads redis-<id>.bin with BloomFilter.readFrom, builds
 * its own filter from the same values with the package-private
 * BloomFilter.create(funnel, long, double, Strategy), reached by reflection,
 * writes that one with writeTo to <dir>/java-<id>.bin for the Go side to load
 * into Redis, and prints
 *
 *     filter <id> equals=<bool> containsAll=<bool> rest=<bytes> probes=<0|1...> javaProbes=<0|1...>
 *
 * equals is redisFilter.equals(javaFilter), containsAll whether the filter
 * read from Redis's bytes mightContain every put value, rest how many bytes
 * readFrom left unread, probes the answers of the filter read from Redis's
 * bytes to the p values, and javaProbes those of Guava's own filter. The last
 * line is "end <filters>". Any failure is an exception and a non-zero exit
 * status.
 */

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.BufferedOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Function;

public final class RedisInterop {
  private static final HexFormat HEX = HexFormat.of();

  record Kind(Funnel<Object> funnel, Function<String, Object> decode) {}

  @SuppressWarnings("unchecked")
  private static Kind kind(String name) {
    return switch (name) {
      case "string" ->
          new Kind(
              (Funnel<Object>) (Funnel<?>) Funnels.stringFunnel(UTF_8),
              s -> new String(HEX.parseHex(s), UTF_8));
      case "bytes" ->
          new Kind((Funnel<Object>) (Funnel<?>) Funnels.byteArrayFunnel(), HEX::parseHex);
      case "long" -> new Kind((Funnel<Object>) (Funnel<?>) Funnels.longFunnel(), Long::valueOf);
      default -> throw new IllegalArgumentException("unknown funnel " + name);
    };
  }

  private static String bits(List<Boolean> bs) {
    StringBuilder sb = new StringBuilder(bs.size());
    for (boolean b : bs) {
      sb.append(b ? '1' : '0');
    }
    return sb.toString();
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: RedisInterop <dir>");
    }
    Path dir = Path.of(args[0]);
    Object[] strategies =
        Class.forName("com.google.common.hash.BloomFilterStrategies").getEnumConstants();
    Class<?> strategyType = Class.forName("com.google.common.hash.BloomFilter$Strategy");
    Method create =
        BloomFilter.class.getDeclaredMethod(
            "create", Funnel.class, long.class, double.class, strategyType);
    create.setAccessible(true);

    List<String> lines = Files.readAllLines(dir.resolve("cases.txt"), UTF_8);
    PrintWriter out = new PrintWriter(new BufferedOutputStream(System.out), false, UTF_8);
    int filters = 0;
    for (int i = 0; i < lines.size(); i++) {
      String[] w = lines.get(i).split(" ", -1);
      if (w.length != 6 || !w[0].equals("filter")) {
        throw new IllegalArgumentException("bad line " + (i + 1) + ": " + lines.get(i));
      }
      String id = w[1];
      Kind kind = kind(w[2]);
      Object strategy = strategies[Integer.parseInt(w[3])];
      long n = Long.parseLong(w[4]);
      double fpp = Double.longBitsToDouble(Long.parseUnsignedLong(w[5], 16));

      @SuppressWarnings("unchecked")
      BloomFilter<Object> java =
          (BloomFilter<Object>) create.invoke(null, kind.funnel(), n, fpp, strategy);
      List<Object> inserted = new ArrayList<>();
      List<Object> probes = new ArrayList<>();
      for (i++; !lines.get(i).equals("end"); i++) {
        String line = lines.get(i);
        Object value = kind.decode().apply(line.substring(2));
        switch (line.substring(0, 2)) {
          case "i " -> {
            inserted.add(value);
            java.put(value);
          }
          case "p " -> probes.add(value);
          default -> throw new IllegalArgumentException("bad value line in " + id + ": " + line);
        }
      }

      BloomFilter<Object> redis;
      long rest;
      try (InputStream in = Files.newInputStream(dir.resolve("redis-" + id + ".bin"))) {
        redis = BloomFilter.readFrom(in, kind.funnel());
        rest = in.transferTo(OutputStream.nullOutputStream());
      }
      try (OutputStream os = Files.newOutputStream(dir.resolve("java-" + id + ".bin"))) {
        java.writeTo(os);
      }
      List<Boolean> redisProbes = new ArrayList<>();
      List<Boolean> javaProbes = new ArrayList<>();
      for (Object p : probes) {
        redisProbes.add(redis.mightContain(p));
        javaProbes.add(java.mightContain(p));
      }
      out.println(
          "filter "
              + id
              + " equals="
              + redis.equals(java)
              + " containsAll="
              + inserted.stream().allMatch(redis::mightContain)
              + " rest="
              + rest
              + " probes="
              + bits(redisProbes)
              + " javaProbes="
              + bits(javaProbes));
      filters++;
    }
    out.println("end " + filters);
    out.flush();
    if (out.checkError()) {
      throw new java.io.IOException("writing the report failed");
    }
  }
}
