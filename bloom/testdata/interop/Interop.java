/*
 * Interop.java: the Guava side of TestJavaInterop (bloom/interop_test.go).
 *
 * The Go test compiles this file against the Guava jar of the machine, runs it
 * once as
 *
 *     java -cp <classes>:<guava.jar> Interop <dir>
 *
 * and compares what it prints with the Go library. Everything Guava computes
 * comes from this run; nothing is stored.
 *
 * <dir>/cases.txt, written by the Go test, holds lines of three kinds:
 *
 *     filter <id> <funnel> <strategyOrdinal> <expectedInsertions> <fppBits>
 *     i <value>          a value to put, in order
 *     p <value>          a held-out value to probe with mightContain
 *     end                the filter is complete
 *     size <n> <fppBits> a sizing question
 *
 * fppBits is Double.doubleToRawLongBits in hex, so that no decimal rounding
 * gets in the way. A funnel name may end in @<label>, which only tells
 * filters of one Java funnel apart: "long@int" is the funnel "long". Values
 * are encoded per funnel (see kind()): strings and byte arrays as hex
 * (strings as their UTF-8 bytes), numbers in decimal (unsigned ones too),
 * floats and doubles as their raw bits in hex, booleans as 0 or 1, lists of
 * the sequential funnel comma-separated, lists of the slice funnels as their
 * size followed by ",<element>" for each (lists of lists by "/<list>"),
 * records as comma-separated fields, IP addresses as the text
 * InetAddress.getByName parses, so that Java itself decides that
 * ::ffff:a.b.c.d is an IPv4 address, and socket addresses as
 * <address>,<port>.
 *
 * For each filter it:
 *   - builds it with the package-private BloomFilter.create(funnel, long,
 *     double, Strategy), through reflection, puts the values and writes it
 *     with writeTo to <dir>/java-<id>.bin for the Go side to read;
 *   - writes the same bytes in base64 to <dir>/java-<id>.b64, as a Java
 *     service would put a filter in a JSON document, for the Go side's
 *     UnmarshalText;
 *   - reads <dir>/go-<id>.bin, the filter the Go library built from the same
 *     values, with BloomFilter.readFrom and compares it with its own;
 *   - reads <dir>/go-<id>.json, the JSON document {"filter":"<base64>"} that
 *     encoding/json wrote of a struct holding the Go filter, decodes the
 *     string with Base64.getDecoder(), reads the bytes with readFrom and
 *     compares the filter with its own.
 * and prints one report line:
 *
 *     filter <id> puts=<0|1...> probes=<0|1...> count=<long|saturated>
 *            fpp=<hex bits> goEquals=<bool> goContainsAll=<bool> goRest=<bytes>
 *            goJSONEquals=<bool>
 *
 * puts are the put() results, probes the mightContain() answers for the p
 * values, count is approximateElementCount(), fpp is expectedFpp(), goEquals
 * is goFilter.equals(javaFilter), goContainsAll whether the Go filter
 * mightContain every put value, goRest how many bytes of the Go file readFrom
 * left unread.
 *
 * For each size line it calls the package-private static
 * optimalNumOfBits(max(n, 1), p) and optimalNumOfHashFunctions(max(n, 1),
 * numBits) as create() does, allocating nothing, and prints
 *
 *     size <n> <fppBits> <numBits> <k>
 *
 * The last line is "end <filters> <sizes>", so that the Go side can tell a
 * complete report from a truncated one. Any failure is an exception and a
 * non-zero exit status.
 */

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import com.google.common.hash.PrimitiveSink;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class Interop {
  private static final HexFormat HEX = HexFormat.of();

  /** The JSON document of go-<id>.json, with the base64 string as group 1. */
  private static final Pattern JSON_FILTER = Pattern.compile("\\{\"filter\":\"([A-Za-z0-9+/=]*)\"\\}");

  /** The record of the custom funnel; the Go side is golden.Record. */
  record Rec(
      byte b,
      boolean bool,
      short s,
      char c,
      int i,
      long l,
      float f,
      double d,
      String string,
      String chars,
      byte[] bytes) {}

  /**
   * The custom multi-field funnel, golden.RecordFunnel in Go: one field of
   * every primitive kind. An enum, as Guava's own funnels are, so that
   * BloomFilter.equals sees the same funnel on both filters.
   */
  enum RecordFunnel implements Funnel<Rec> {
    INSTANCE;

    @Override
    public void funnel(Rec r, PrimitiveSink into) {
      into.putByte(r.b())
          .putBoolean(r.bool())
          .putShort(r.s())
          .putChar(r.c())
          .putInt(r.i())
          .putLong(r.l())
          .putFloat(r.f())
          .putDouble(r.d())
          .putString(r.string(), UTF_8)
          .putUnencodedChars(r.chars())
          .putBytes(r.bytes());
    }
  }

  /** funnel.Bool's twin: Guava has no boolean funnel. */
  enum BooleanFunnel implements Funnel<Boolean> {
    INSTANCE;

    @Override
    public void funnel(Boolean b, PrimitiveSink into) {
      into.putBoolean(b);
    }
  }

  /** The twin of funnel.Addr and funnel.IP. */
  enum InetAddressFunnel implements Funnel<InetAddress> {
    INSTANCE;

    @Override
    public void funnel(InetAddress addr, PrimitiveSink into) {
      into.putBytes(addr.getAddress());
    }
  }

  /** funnel.AddrPort's twin. */
  enum SocketAddressFunnel implements Funnel<InetSocketAddress> {
    INSTANCE;

    @Override
    public void funnel(InetSocketAddress sock, PrimitiveSink into) {
      into.putBytes(sock.getAddress().getAddress());
      into.putShort((short) sock.getPort());
    }
  }

  /** The twin of funnel.Float32: Guava has no float funnel. */
  enum FloatFunnel implements Funnel<Float> {
    INSTANCE;

    @Override
    public void funnel(Float f, PrimitiveSink into) {
      into.putFloat(f);
    }
  }

  /** The twin of funnel.Float64: Guava has no double funnel. */
  enum DoubleFunnel implements Funnel<Double> {
    INSTANCE;

    @Override
    public void funnel(Double d, PrimitiveSink into) {
      into.putDouble(d);
    }
  }

  /**
   * funnel.Slice's twin: the list's size, then each element as the number of
   * bytes its funnel feeds followed by those bytes. A record, so that two
   * slice funnels of equal element funnels are equal, as BloomFilter.equals
   * requires.
   */
  record SliceFunnel<E>(Funnel<E> element) implements Funnel<List<E>> {
    @Override
    public void funnel(List<E> list, PrimitiveSink into) {
      into.putInt(list.size());
      for (E e : list) {
        BytesSink bytes = new BytesSink();
        element.funnel(e, bytes);
        into.putInt(bytes.size());
        into.putBytes(bytes.toByteArray());
      }
    }
  }

  /** A PrimitiveSink that records the bytes fed to it, as a hasher would see them. */
  static final class BytesSink implements PrimitiveSink {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);

    int size() {
      return out.size();
    }

    byte[] toByteArray() {
      return out.toByteArray();
    }

    private PrimitiveSink flush(int n) {
      out.write(scratch.array(), 0, n);
      scratch.clear();
      return this;
    }

    @Override
    public PrimitiveSink putByte(byte b) {
      out.write(b);
      return this;
    }

    @Override
    public PrimitiveSink putBytes(byte[] bytes) {
      out.write(bytes, 0, bytes.length);
      return this;
    }

    @Override
    public PrimitiveSink putBytes(byte[] bytes, int off, int len) {
      out.write(bytes, off, len);
      return this;
    }

    @Override
    public PrimitiveSink putBytes(ByteBuffer bytes) {
      while (bytes.hasRemaining()) {
        out.write(bytes.get());
      }
      return this;
    }

    @Override
    public PrimitiveSink putShort(short s) {
      scratch.putShort(s);
      return flush(2);
    }

    @Override
    public PrimitiveSink putInt(int i) {
      scratch.putInt(i);
      return flush(4);
    }

    @Override
    public PrimitiveSink putLong(long l) {
      scratch.putLong(l);
      return flush(8);
    }

    @Override
    public PrimitiveSink putFloat(float f) {
      return putInt(Float.floatToRawIntBits(f));
    }

    @Override
    public PrimitiveSink putDouble(double d) {
      return putLong(Double.doubleToRawLongBits(d));
    }

    @Override
    public PrimitiveSink putBoolean(boolean b) {
      return putByte(b ? (byte) 1 : (byte) 0);
    }

    @Override
    public PrimitiveSink putChar(char c) {
      scratch.putChar(c);
      return flush(2);
    }

    @Override
    public PrimitiveSink putUnencodedChars(CharSequence cs) {
      for (int i = 0; i < cs.length(); i++) {
        putChar(cs.charAt(i));
      }
      return this;
    }

    @Override
    public PrimitiveSink putString(CharSequence cs, Charset charset) {
      return putBytes(cs.toString().getBytes(charset));
    }

    /**
     * The old name of putUnencodedChars, which Debian's Guava still declares
     * and Maven's does not: so no @Override.
     */
    public PrimitiveSink putString(CharSequence cs) {
      return putUnencodedChars(cs);
    }
  }

  /** A funnel and how to decode its values from cases.txt. */
  record Kind(Funnel<Object> funnel, Function<String, Object> decode) {}

  @SuppressWarnings("unchecked")
  private static Kind kind(String name) {
    Funnel<?> funnel;
    Function<String, Object> decode;
    switch (name) {
      case "bytes" -> {
        funnel = Funnels.byteArrayFunnel();
        decode = HEX::parseHex;
      }
      case "string" -> {
        funnel = Funnels.stringFunnel(UTF_8);
        decode = Interop::utf8;
      }
      case "unencodedChars" -> {
        funnel = Funnels.unencodedCharsFunnel();
        decode = Interop::utf8;
      }
      case "int" -> {
        funnel = Funnels.integerFunnel();
        decode = Integer::valueOf;
      }
      case "long" -> {
        funnel = Funnels.longFunnel();
        decode = Long::valueOf;
      }
      case "sequentialLong" -> {
        funnel = Funnels.sequentialFunnel(Funnels.longFunnel());
        decode = Interop::longList;
      }
      case "record" -> {
        funnel = RecordFunnel.INSTANCE;
        decode = Interop::rec;
      }
      case "unsignedLong" -> {
        funnel = Funnels.longFunnel();
        decode = Long::parseUnsignedLong;
      }
      case "bool" -> {
        funnel = BooleanFunnel.INSTANCE;
        decode = Interop::bool;
      }
      case "unsignedInt" -> {
        funnel = Funnels.integerFunnel();
        decode = Integer::parseUnsignedInt;
      }
      case "float" -> {
        funnel = FloatFunnel.INSTANCE;
        decode = x -> Float.intBitsToFloat(Integer.parseUnsignedInt(x, 16));
      }
      case "double" -> {
        funnel = DoubleFunnel.INSTANCE;
        decode = x -> Double.longBitsToDouble(Long.parseUnsignedLong(x, 16));
      }
      case "sliceString" -> {
        funnel = new SliceFunnel<>(Funnels.stringFunnel(UTF_8));
        decode = x -> sizedList(x, ",", Interop::utf8);
      }
      case "sliceLong" -> {
        funnel = new SliceFunnel<>(Funnels.longFunnel());
        decode = x -> sizedList(x, ",", Long::valueOf);
      }
      case "sliceSliceString" -> {
        funnel = new SliceFunnel<>(new SliceFunnel<>(Funnels.stringFunnel(UTF_8)));
        decode = x -> sizedList(x, "/", y -> sizedList(y, ",", Interop::utf8));
      }
      case "sliceAddr" -> {
        funnel = new SliceFunnel<>(InetAddressFunnel.INSTANCE);
        decode = x -> sizedList(x, ",", Interop::inetAddress);
      }
      case "addr", "ip" -> {
        funnel = InetAddressFunnel.INSTANCE;
        decode = Interop::inetAddress;
      }
      case "addrPort" -> {
        funnel = SocketAddressFunnel.INSTANCE;
        decode = Interop::socketAddress;
      }
      default -> throw new IllegalArgumentException("unknown funnel " + name);
    }
    return new Kind((Funnel<Object>) funnel, decode);
  }

  private static String utf8(String hex) {
    return new String(HEX.parseHex(hex), UTF_8);
  }

  private static boolean bool(String s) {
    return switch (s) {
      case "0" -> false;
      case "1" -> true;
      default -> throw new IllegalArgumentException("bad boolean " + s);
    };
  }

  /** IPv6 (the only text with a colon) with an optional numeric zone, or dotted IPv4. */
  private static final Pattern IP_LITERAL =
      Pattern.compile("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*(%[0-9]+)?|[0-9]{1,3}(\\.[0-9]{1,3}){3}");

  /**
   * The address getByName parses from text. Only literals are let through:
   * for anything else getByName would ask DNS.
   */
  private static InetAddress inetAddress(String s) {
    if (!IP_LITERAL.matcher(s).matches()) {
      throw new IllegalArgumentException("not an IP address literal: " + s);
    }
    try {
      return InetAddress.getByName(s);
    } catch (java.net.UnknownHostException e) {
      throw new IllegalArgumentException("bad IP address " + s, e);
    }
  }

  /** address,port */
  private static InetSocketAddress socketAddress(String s) {
    int comma = s.lastIndexOf(',');
    if (comma < 0) {
      throw new IllegalArgumentException("bad socket address " + s);
    }
    return new InetSocketAddress(
        inetAddress(s.substring(0, comma)), Integer.parseInt(s.substring(comma + 1)));
  }

  /** size followed by sep and an element for each: "2,a,b", "0". */
  private static <E> List<E> sizedList(String s, String sep, Function<String, E> element) {
    String[] f = s.split(sep, -1);
    int n = Integer.parseInt(f[0]);
    if (f.length != n + 1) {
      throw new IllegalArgumentException("bad list of " + n + ": " + s);
    }
    List<E> out = new ArrayList<>(n);
    for (int i = 1; i <= n; i++) {
      out.add(element.apply(f[i]));
    }
    return out;
  }

  private static List<Long> longList(String s) {
    List<Long> out = new ArrayList<>();
    if (!s.isEmpty()) {
      for (String x : s.split(",", -1)) {
        out.add(Long.valueOf(x));
      }
    }
    return out;
  }

  /**
   * byte,bool,short,char,int,long,floatBits,doubleBits,stringHex,charsHex,bytesHex
   * with the numbers in decimal (char as its code unit), bool as 0 or 1 and
   * the float and double as hex bit patterns.
   */
  private static Rec rec(String s) {
    String[] f = s.split(",", -1);
    if (f.length != 11 || !(f[1].equals("0") || f[1].equals("1"))) {
      throw new IllegalArgumentException("bad record " + s);
    }
    return new Rec(
        Byte.parseByte(f[0]),
        f[1].equals("1"),
        Short.parseShort(f[2]),
        (char) Integer.parseInt(f[3]),
        Integer.parseInt(f[4]),
        Long.parseLong(f[5]),
        Float.intBitsToFloat(Integer.parseUnsignedInt(f[6], 16)),
        Double.longBitsToDouble(Long.parseUnsignedLong(f[7], 16)),
        utf8(f[8]),
        utf8(f[9]),
        HEX.parseHex(f[10]));
  }

  private static double fppFromBits(String hex) {
    return Double.longBitsToDouble(Long.parseUnsignedLong(hex, 16));
  }

  private static String bits(List<Boolean> bs) {
    StringBuilder sb = new StringBuilder(bs.size());
    for (boolean b : bs) {
      sb.append(b ? '1' : '0');
    }
    return sb.toString();
  }

  // The package-private parts of Guava the test needs, reached by reflection
  // because they are what create() really runs: the strategy enum, the
  // 4-argument create, and the two sizing functions.
  private final Object[] strategies;
  private final Method create;
  private final Method optimalNumOfBits;
  private final Method optimalNumOfHashFunctions;

  private Interop() throws ReflectiveOperationException {
    strategies = Class.forName("com.google.common.hash.BloomFilterStrategies").getEnumConstants();
    Class<?> strategyType = Class.forName("com.google.common.hash.BloomFilter$Strategy");
    create =
        BloomFilter.class.getDeclaredMethod(
            "create", Funnel.class, long.class, double.class, strategyType);
    optimalNumOfBits =
        BloomFilter.class.getDeclaredMethod("optimalNumOfBits", long.class, double.class);
    optimalNumOfHashFunctions =
        BloomFilter.class.getDeclaredMethod("optimalNumOfHashFunctions", long.class, long.class);
    create.setAccessible(true);
    optimalNumOfBits.setAccessible(true);
    optimalNumOfHashFunctions.setAccessible(true);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: Interop <dir>");
    }
    Path dir = Path.of(args[0]);
    Interop interop = new Interop();
    List<String> lines = Files.readAllLines(dir.resolve("cases.txt"), UTF_8);
    PrintWriter out = new PrintWriter(new BufferedOutputStream(System.out), false, UTF_8);
    int filters = 0;
    int sizes = 0;
    for (int i = 0; i < lines.size(); i++) {
      String[] w = lines.get(i).split(" ", -1);
      switch (w[0]) {
        case "filter" -> {
          int end = i + 1;
          while (!lines.get(end).equals("end")) {
            end++;
          }
          interop.filter(dir, w, lines.subList(i + 1, end), out);
          i = end;
          filters++;
        }
        case "size" -> {
          interop.size(w, out);
          sizes++;
        }
        default -> throw new IllegalArgumentException("bad line " + (i + 1) + ": " + lines.get(i));
      }
    }
    out.println("end " + filters + " " + sizes);
    out.flush();
    if (out.checkError()) {
      throw new java.io.IOException("writing the report failed");
    }
  }

  @SuppressWarnings("unchecked")
  private void filter(Path dir, String[] header, List<String> body, PrintWriter out)
      throws Exception {
    String id = header[1];
    Kind kind = kind(header[2].split("@", 2)[0]);
    Object strategy = strategies[Integer.parseInt(header[3])];
    long n = Long.parseLong(header[4]);
    double fpp = fppFromBits(header[5]);

    BloomFilter<Object> filter =
        (BloomFilter<Object>) create.invoke(null, kind.funnel(), n, fpp, strategy);
    List<Object> inserted = new ArrayList<>();
    List<Boolean> puts = new ArrayList<>();
    List<Boolean> probes = new ArrayList<>();
    for (String line : body) {
      Object value = kind.decode().apply(line.substring(2));
      switch (line.substring(0, 2)) {
        case "i " -> {
          inserted.add(value);
          puts.add(filter.put(value));
        }
        case "p " -> probes.add(filter.mightContain(value));
        default -> throw new IllegalArgumentException("bad value line in " + id + ": " + line);
      }
    }

    String count;
    try {
      count = Long.toString(filter.approximateElementCount());
    } catch (ArithmeticException e) {
      count = "saturated"; // every bit set: Guava cannot estimate
    }
    ByteArrayOutputStream javaBytes = new ByteArrayOutputStream();
    filter.writeTo(javaBytes);
    Files.write(dir.resolve("java-" + id + ".bin"), javaBytes.toByteArray());
    Files.writeString(
        dir.resolve("java-" + id + ".b64"),
        Base64.getEncoder().encodeToString(javaBytes.toByteArray()),
        UTF_8);

    BloomFilter<Object> goFilter;
    long goRest;
    try (InputStream in = Files.newInputStream(dir.resolve("go-" + id + ".bin"))) {
      goFilter = BloomFilter.readFrom(in, kind.funnel());
      goRest = in.transferTo(OutputStream.nullOutputStream());
    }
    boolean goContainsAll = inserted.stream().allMatch(goFilter::mightContain);

    String json = Files.readString(dir.resolve("go-" + id + ".json"), UTF_8);
    Matcher m = JSON_FILTER.matcher(json);
    if (!m.matches()) {
      throw new IllegalArgumentException("go-" + id + ".json is not {\"filter\":\"...\"}: " + json);
    }
    BloomFilter<Object> goJSONFilter =
        BloomFilter.readFrom(
            new ByteArrayInputStream(Base64.getDecoder().decode(m.group(1))), kind.funnel());

    out.println(
        "filter "
            + id
            + " puts="
            + bits(puts)
            + " probes="
            + bits(probes)
            + " count="
            + count
            + " fpp="
            + HEX.toHexDigits(Double.doubleToRawLongBits(filter.expectedFpp()))
            + " goEquals="
            + goFilter.equals(filter)
            + " goContainsAll="
            + goContainsAll
            + " goRest="
            + goRest
            + " goJSONEquals="
            + goJSONFilter.equals(filter));
  }

  private void size(String[] w, PrintWriter out) throws ReflectiveOperationException {
    long n = Long.parseLong(w[1]);
    double p = fppFromBits(w[2]);
    long n1 = Math.max(n, 1); // create() sizes n = 0 as 1
    long numBits = (long) optimalNumOfBits.invoke(null, n1, p);
    int k = (int) optimalNumOfHashFunctions.invoke(null, n1, numBits);
    out.println("size " + w[1] + " " + w[2] + " " + numBits + " " + k);
  }
}
