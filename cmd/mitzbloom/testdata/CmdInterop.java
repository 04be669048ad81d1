/*
 * CmdInterop.java: the Guava side of TestJavaInterop (interop_test.go).
 *
 * The Go test compiles this file against the Guava jar of the machine and
 * runs it once as
 *
 *     java -cp <classes>:<guava.jar> CmdInterop <commands.txt>
 *
 * It is compiled with bloom/testdata/interop/Interop.java, whose funnels for
 * addresses it uses.
 *
 * Each line of commands.txt is one command; for each, CmdInterop prints one
 * line that starts with the command's name and its first argument. Keys files
 * hold one key per line, in the text that mitzbloom build reads, and are
 * parsed here as a Java service would parse them (see parse). Funnels are
 * named as mitzbloom's -funnel values. pBits is Double.doubleToRawLongBits in
 * hex.
 *
 *   check <funnel> <strategyOrdinal> <n> <pBits> <filterFile> <keysFile>
 *       reads the filter mitzbloom built with BloomFilter.readFrom and the
 *       funnel, and prints
 *         check <filterFile> keys=<lines> missing=<lines mightContain denies>
 *               rest=<bytes readFrom left> equal=<readFrom equals the filter
 *               Guava builds from the same keys with create(funnel, n, p,
 *               strategy)>
 *
 *   write <funnel> <strategyOrdinal> <n> <pBits> <outFile> <keysFile> <probesFile>
 *       builds a filter with create(funnel, n, p, strategy), puts the keys,
 *       writes it with writeTo, and prints
 *         write <outFile> bitSize=<bitSize()> fpp=<expectedFpp() bits>
 *               count=<approximateElementCount()> probes=<0|1 per probe>
 *
 *   merge <a> <b>
 *       reads both with the string funnel, calls a.putAll(b), and prints
 *         merge <a> ok            or
 *         merge <a> <the message of the IllegalArgumentException>
 *
 * The last line is "end <commands>". Any other failure is an exception and a
 * non-zero exit status.
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
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

public final class CmdInterop {
  @SuppressWarnings("unchecked")
  private static Funnel<Object> funnel(String name) {
    Funnel<?> f =
        switch (name) {
          case "string" -> Funnels.stringFunnel(UTF_8);
          case "chars" -> Funnels.unencodedCharsFunnel();
          case "long" -> Funnels.longFunnel();
          case "int" -> Funnels.integerFunnel();
          case "bytes" -> Funnels.byteArrayFunnel();
          // The twins of funnel.Addr and funnel.AddrPort, those of the
          // library's own interop test, compiled with this file.
          case "addr" -> Interop.InetAddressFunnel.INSTANCE;
          case "addrport" -> Interop.SocketAddressFunnel.INSTANCE;
          default -> throw new IllegalArgumentException("unknown funnel " + name);
        };
    return (Funnel<Object>) f;
  }

  /** The key a line of a keys file is, for the funnel. */
  private static Object parse(String funnel, String line) throws UnknownHostException {
    return switch (funnel) {
      case "string", "chars" -> line;
      case "long" -> Long.parseLong(line);
      case "int" -> Integer.parseInt(line);
      case "bytes" -> HexFormat.of().parseHex(line);
      case "addr" -> InetAddress.getByName(line);
      case "addrport" -> socketAddress(line);
      default -> throw new IllegalArgumentException("unknown funnel " + funnel);
    };
  }

  /** host:port with an IPv6 host in brackets, as Go's netip.AddrPort writes it. */
  private static InetSocketAddress socketAddress(String s) throws UnknownHostException {
    int colon = s.lastIndexOf(':');
    String host = s.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return new InetSocketAddress(InetAddress.getByName(host), Integer.parseInt(s.substring(colon + 1)));
  }

  /**
   * The lines of a keys file as mitzbloom build splits it: at "\n", dropping
   * a "\r" before it; the last line needs no "\n".
   */
  private static List<String> lines(String path) throws Exception {
    String text = new String(Files.readAllBytes(Path.of(path)), UTF_8);
    List<String> out = new ArrayList<>();
    int start = 0;
    while (start < text.length()) {
      int nl = text.indexOf('\n', start);
      if (nl < 0) {
        out.add(text.substring(start));
        break;
      }
      String line = text.substring(start, nl);
      out.add(line.endsWith("\r") ? line.substring(0, line.length() - 1) : line);
      start = nl + 1;
    }
    return out;
  }

  private final Object[] strategies;
  private final Method create;
  private final Method bitSize;

  private CmdInterop() throws ReflectiveOperationException {
    // Package-private parts of Guava: the strategies, the create that takes
    // one, and bitSize().
    strategies = Class.forName("com.google.common.hash.BloomFilterStrategies").getEnumConstants();
    Class<?> strategyType = Class.forName("com.google.common.hash.BloomFilter$Strategy");
    create =
        BloomFilter.class.getDeclaredMethod(
            "create", Funnel.class, long.class, double.class, strategyType);
    bitSize = BloomFilter.class.getDeclaredMethod("bitSize");
    create.setAccessible(true);
    bitSize.setAccessible(true);
  }

  @SuppressWarnings("unchecked")
  private BloomFilter<Object> create(String funnel, String ordinal, String n, String pBits)
      throws ReflectiveOperationException {
    double p = Double.longBitsToDouble(Long.parseUnsignedLong(pBits, 16));
    return (BloomFilter<Object>)
        create.invoke(null, funnel(funnel), Long.parseLong(n), p, strategies[Integer.parseInt(ordinal)]);
  }

  private String check(String[] w) throws Exception {
    String funnel = w[1];
    BloomFilter<Object> read;
    long rest;
    try (InputStream in = Files.newInputStream(Path.of(w[5]))) {
      read = BloomFilter.readFrom(in, funnel(funnel));
      rest = in.readAllBytes().length;
    }
    BloomFilter<Object> own = create(funnel, w[2], w[3], w[4]);
    List<String> keys = lines(w[6]);
    int missing = 0;
    for (String line : keys) {
      Object key = parse(funnel, line);
      own.put(key);
      if (!read.mightContain(key)) {
        missing++;
      }
    }
    return String.format(
        "check %s keys=%d missing=%d rest=%d equal=%b", w[5], keys.size(), missing, rest, read.equals(own));
  }

  private String write(String[] w) throws Exception {
    String funnel = w[1];
    BloomFilter<Object> f = create(funnel, w[2], w[3], w[4]);
    for (String line : lines(w[6])) {
      f.put(parse(funnel, line));
    }
    try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(Path.of(w[5])))) {
      f.writeTo(out);
    }
    StringBuilder probes = new StringBuilder();
    for (String line : lines(w[7])) {
      probes.append(f.mightContain(parse(funnel, line)) ? '1' : '0');
    }
    return String.format(
        "write %s bitSize=%d fpp=%016x count=%d probes=%s",
        w[5],
        (Long) bitSize.invoke(f),
        Double.doubleToRawLongBits(f.expectedFpp()),
        f.approximateElementCount(),
        probes);
  }

  private static String merge(String[] w) throws Exception {
    BloomFilter<Object> a;
    BloomFilter<Object> b;
    try (InputStream in = Files.newInputStream(Path.of(w[1]))) {
      a = BloomFilter.readFrom(in, funnel("string"));
    }
    try (InputStream in = Files.newInputStream(Path.of(w[2]))) {
      b = BloomFilter.readFrom(in, funnel("string"));
    }
    try {
      a.putAll(b);
      return "merge " + w[1] + " ok";
    } catch (IllegalArgumentException e) {
      return "merge " + w[1] + " " + e.getMessage();
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: CmdInterop <commands.txt>");
    }
    CmdInterop c = new CmdInterop();
    PrintWriter out = new PrintWriter(new BufferedOutputStream(System.out), false, UTF_8);
    int n = 0;
    for (String line : Files.readAllLines(Path.of(args[0]), UTF_8)) {
      String[] w = line.split(" ", -1);
      out.println(
          switch (w[0]) {
            case "check" -> c.check(w);
            case "write" -> c.write(w);
            case "merge" -> merge(w);
            default -> throw new IllegalArgumentException("unknown command " + line);
          });
      n++;
    }
    out.println("end " + n);
    out.flush();
  }
}
