// GuavaBench times Guava's BloomFilter on the workloads of the Go benchmarks
// in the package above: the same keys (it repeats keys.go's key functions),
// the same sizes, the same Put and MightContain semantics (workload.go),
// timed a chunk of 256 keys at a time. The compare command compiles it and
// runs one JVM per key type, operation and size, as JMH forks one per
// benchmark: in a JVM that had run other work first, the JIT had compiled
// Guava for that work, and some runs came out ten times slower.
//
//   javac -cp /usr/share/java/guava.jar -d OUT GuavaBench.java
//   java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -XX:+UseTransparentHugePages \
//     -cp OUT:/usr/share/java/guava.jar GuavaBench bench KEY OP N WARMUPMILLIS COUNT MILLIS PROBEHALF HELDOUT
//
// (bench.Guava.Run says why those flags.)
//
// KEY is int64 or hostport; OP Put or MightContain; N the filter size. It
// runs iterations of at least MILLIS milliseconds of timed work, discarding
// them for WARMUPMILLIS milliseconds, then reports COUNT more; PROBEHALF and
// HELDOUT are as in bench.Config. It prints one line per reported
// iteration,
//
//   result op=Put key=int64 n=10000 ns_per_op=21.5 bytes_per_op=96.0 ops=9302272
//
// and for MightContain one line about the filled filter,
//
//   stats key=int64 n=10000 bits=95872 held_out=1000000 false_positives=10046 present_probes=10000 false_negatives=0 fill_seconds=0.004
//
// plus a line starting with "#" that describes the JVM. "GuavaBench keys"
// prints keys and probe indexes instead, for the Go test that checks that
// both sides make the same keys.
//
// "GuavaBench readfrom FILE" times BloomFilter.readFrom of a filter file of
// int64 keys, through a BufferedInputStream of 1 MiB over a
// FileInputStream, and "GuavaBench writeto FILE" times writeTo of the
// filter read from it to OutputStream.nullOutputStream(): one timing each,
// in a JVM of its own, as a service loads its filter once, printed as
//
//   serial op=readfrom seconds=1.234567 count=744261118
//
// int64 keys are boxed into Long objects before the timer starts, as the
// Go benchmarks make their keys beforehand: the timed loop is Guava's put or
// mightContain and nothing else. Bytes per op are what the thread allocated
// during an iteration (com.sun.management.ThreadMXBean), less what making
// filters and keys between the timed chunks allocated.

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public final class GuavaBench {
  static final long SEED = 0x6d69747a626c6f6fL;
  static final long ABSENT_BASE = 1L << 38;
  static final long HELD_OUT_BASE = 1L << 39;
  static final long SHUFFLE_BASE = 3L << 38;
  static final int CHUNK = 256;
  static final int MAX_WINDOW = 1 << 20;
  static final double P = 0.01;

  /** The index-th number of splitmix64 seeded with SEED: bench.Uint64. */
  static long uint64(long index) {
    long z = SEED + (index + 1) * 0x9e3779b97f4a7c15L;
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  static long mix40(long x) {
    final long mask = (1L << 40) - 1;
    x &= mask;
    x = (x * 0x9e3779b97f4a7c15L) & mask;
    x ^= x >>> 21;
    x = (x * 0xbf58476d1ce4e5b9L) & mask;
    return x ^ (x >>> 19);
  }

  /** bench.HostPortKey. */
  static String hostPort(long index) {
    long v = mix40(index);
    return new StringBuilder(20)
        .append("10.")
        .append((v >>> 32) & 0xff)
        .append('.')
        .append((v >>> 24) & 0xff)
        .append('.')
        .append((v >>> 16) & 0xff)
        .append(':')
        .append(v & 0xffff)
        .toString();
  }

  /** bench.ProbeIndexes. */
  static long[] probeIndexes(long n, int half) {
    long h = Math.min(n, half);
    long[] idx = new long[(int) (2 * h)];
    for (long j = 0; j < h; j++) {
      idx[(int) (2 * j)] = j * n / h;
      idx[(int) (2 * j + 1)] = ABSENT_BASE + j;
    }
    for (int t = 0, j = idx.length - 1; j > 0; t++, j--) {
      int r = (int) Long.remainderUnsigned(uint64(SHUFFLE_BASE + t), j + 1);
      long x = idx[j];
      idx[j] = idx[r];
      idx[r] = x;
    }
    return idx;
  }

  /** A key type: bench.Suite's Key, KeyOf and the matching funnel. */
  abstract static class Kind<K> {
    final String name;
    final Funnel<K> funnel;

    Kind(String name, Funnel<K> funnel) {
      this.name = name;
      this.funnel = funnel;
    }

    abstract K key(long index);

    BloomFilter<K> newFilter(long n) {
      return BloomFilter.create(funnel, n, P);
    }
  }

  static final Kind<Long> INT64 =
      new Kind<Long>("int64", Funnels.longFunnel()) {
        @Override
        Long key(long index) {
          return uint64(index);
        }
      };

  static final Kind<CharSequence> HOSTPORT =
      new Kind<CharSequence>("hostport", Funnels.stringFunnel(StandardCharsets.UTF_8)) {
        @Override
        CharSequence key(long index) {
          return hostPort(index);
        }
      };

  static Kind<?> kind(String name) {
    switch (name) {
      case "int64":
        return INT64;
      case "hostport":
        return HOSTPORT;
      default:
        throw new IllegalArgumentException("unknown key type " + name);
    }
  }

  static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** Timed work: nanoseconds, operations and bytes allocated. */
  static final class Tally {
    long ns, ops, bytes;
  }

  static long sink;

  /** Keys of consecutive indexes, wrapping at n: workload.go's ring. */
  static final class Ring<K> {
    final Object[] keys;
    int len;
    long first;

    Ring(int size) {
      keys = new Object[size];
    }

    void fill(Kind<K> kind, long first, long n, int size) {
      Arrays.fill(keys, null);
      this.first = first;
      for (int t = 0; t < size; t++) {
        keys[t] = kind.key((first + t) % n);
      }
      len = size;
    }

    /** The offset in keys of index idx, or -1 if the ring does not hold it. */
    int offset(long idx, long n) {
      long t = (idx + n - first) % n;
      return t < len ? (int) t : -1;
    }
  }

  /** A Put benchmark's filter being filled, as putState in workload.go. */
  static final class PutState<K> {
    final Kind<K> kind;
    final long n;
    BloomFilter<K> filter;
    long pos;
    final Ring<K> win;

    PutState(Kind<K> kind, long n) {
      this.kind = kind;
      this.n = n;
      filter = kind.newFilter(n);
      int size = (int) Math.min(n, MAX_WINDOW);
      win = new Ring<>(size);
      win.fill(kind, 0, n, size);
    }

    void run(Tally tally, long targetNs) {
      long untimedBytes = 0;
      long a0 = THREADS.getCurrentThreadAllocatedBytes();
      while (tally.ns < targetNs) {
        if (pos == n || win.offset(pos, n) < 0) {
          long u0 = THREADS.getCurrentThreadAllocatedBytes();
          if (pos == n) {
            filter = null;
            filter = kind.newFilter(n);
            pos = 0;
          } else {
            win.fill(kind, pos, n, (int) Math.min(n, MAX_WINDOW));
          }
          untimedBytes += THREADS.getCurrentThreadAllocatedBytes() - u0;
          continue;
        }
        int o = win.offset(pos, n);
        int m = (int) Math.min(Math.min(CHUNK, win.len - o), n - pos);
        long t0 = System.nanoTime();
        putChunk(filter, win.keys, o, o + m);
        tally.ns += System.nanoTime() - t0;
        tally.ops += m;
        pos += m;
      }
      tally.bytes = THREADS.getCurrentThreadAllocatedBytes() - a0 - untimedBytes;
    }
  }

  // The timed loops are methods of their own, so that the JIT compiles
  // them apart from the loops that drive them, whose rare branches (a new
  // filter, new keys) it may compile and recompile at any time.

  @SuppressWarnings("unchecked")
  static <K> void putChunk(BloomFilter<K> f, Object[] keys, int from, int to) {
    for (int i = from; i < to; i++) {
      f.put((K) keys[i]);
    }
  }

  @SuppressWarnings("unchecked")
  static <K> long lookUpChunk(BloomFilter<K> f, Object[] probes, int from, int to) {
    long found = 0;
    for (int i = from; i < to; i++) {
      if (f.mightContain((K) probes[i])) {
        found++;
      }
    }
    return found;
  }

  static <K> void lookUp(BloomFilter<K> f, Object[] probes, long[] from, Tally tally, long targetNs) {
    long found = 0;
    long pos = from[0];
    long a0 = THREADS.getCurrentThreadAllocatedBytes();
    while (tally.ns < targetNs) {
      int o = (int) (pos % probes.length);
      int m = Math.min(CHUNK, probes.length - o);
      long t0 = System.nanoTime();
      found += lookUpChunk(f, probes, o, o + m);
      tally.ns += System.nanoTime() - t0;
      tally.ops += m;
      pos += m;
    }
    tally.bytes = THREADS.getCurrentThreadAllocatedBytes() - a0;
    from[0] = pos;
    sink += found;
  }

  static void report(String op, Kind<?> kind, long n, Tally t) {
    System.out.printf(
        "result op=%s key=%s n=%d ns_per_op=%.4f bytes_per_op=%.4f ops=%d%n",
        op, kind.name, n, (double) t.ns / t.ops, (double) t.bytes / t.ops, t.ops);
  }

  /** Counts the bytes written to it. */
  static final class CountingStream extends OutputStream {
    long count;

    @Override
    public void write(int b) {
      count++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      count += len;
    }
  }

  static <K> long bits(BloomFilter<K> f) throws IOException {
    CountingStream out = new CountingStream();
    f.writeTo(out);
    // writeTo writes a 6-byte header, then the bits.
    return (out.count - 6) * 8;
  }

  /** Runs iterations of work until warmupNs have passed, then count more, reported. */
  static void iterate(String op, Kind<?> kind, long n, long warmupNs, int count, long targetNs, Work work) {
    long end = System.nanoTime() + warmupNs;
    do {
      work.run(new Tally(), targetNs);
    } while (System.nanoTime() < end);
    for (int i = 0; i < count; i++) {
      Tally t = new Tally();
      work.run(t, targetNs);
      report(op, kind, n, t);
    }
  }

  /** One iteration of a benchmark: timed work until tally.ns reaches targetNs. */
  interface Work {
    void run(Tally tally, long targetNs);
  }

  static <K> void benchPut(Kind<K> kind, long n, long warmupNs, int count, long targetNs) {
    PutState<K> put = new PutState<>(kind, n);
    iterate("Put", kind, n, warmupNs, count, targetNs, put::run);
  }

  @SuppressWarnings("unchecked")
  static <K> void benchMightContain(
      Kind<K> kind, long n, long warmupNs, int count, long targetNs, int probeHalf, int heldOut)
      throws IOException {
    long start = System.nanoTime();
    BloomFilter<K> full = kind.newFilter(n);
    for (long i = 0; i < n; i++) {
      full.put(kind.key(i));
    }
    double fillSeconds = (System.nanoTime() - start) / 1e9;
    long falsePositives = 0;
    for (long j = 0; j < heldOut; j++) {
      if (full.mightContain(kind.key(HELD_OUT_BASE + j))) {
        falsePositives++;
      }
    }
    long[] idx = probeIndexes(n, probeHalf);
    Object[] probes = new Object[idx.length];
    long present = 0, falseNegatives = 0;
    for (int i = 0; i < idx.length; i++) {
      probes[i] = kind.key(idx[i]);
      if (idx[i] < n) {
        present++;
        if (!full.mightContain((K) probes[i])) {
          falseNegatives++;
        }
      }
    }
    System.out.printf(
        "stats key=%s n=%d bits=%d held_out=%d false_positives=%d present_probes=%d false_negatives=%d fill_seconds=%.3f%n",
        kind.name, n, bits(full), heldOut, falsePositives, present, falseNegatives, fillSeconds);

    long[] from = {0};
    iterate("MightContain", kind, n, warmupNs, count, targetNs, (t, target) -> lookUp(full, probes, from, t, target));
  }

  static void keys() {
    long[] indexes = {0, 1, 2, 3, 1000, 123456789, ABSENT_BASE, ABSENT_BASE + 1, HELD_OUT_BASE, (1L << 40) - 1};
    for (long i : indexes) {
      System.out.printf("int64 %d %d%n", i, uint64(i));
      System.out.printf("hostport %d %s%n", i, hostPort(i));
    }
    for (long[] c : new long[][] {{10, 4}, {1000, 1000}, {1000003, 100}}) {
      long[] idx = probeIndexes(c[0], (int) c[1]);
      StringBuilder b = new StringBuilder();
      b.append("probes ").append(c[0]).append(' ').append(c[1]);
      for (long x : idx) {
        b.append(' ').append(x);
      }
      System.out.println(b);
    }
  }

  /** Reads the filter file path with readFrom. */
  static BloomFilter<Long> readFile(String path) throws IOException {
    try (InputStream in = new BufferedInputStream(new FileInputStream(path), 1 << 20)) {
      return BloomFilter.readFrom(in, Funnels.longFunnel());
    }
  }

  /** Times readFrom, or writeTo of the filter read, once. */
  static void serial(String op, String path) throws IOException {
    BloomFilter<Long> f;
    long start, end;
    switch (op) {
      case "readfrom":
        start = System.nanoTime();
        f = readFile(path);
        end = System.nanoTime();
        break;
      case "writeto":
        f = readFile(path);
        start = System.nanoTime();
        f.writeTo(OutputStream.nullOutputStream());
        end = System.nanoTime();
        break;
      default:
        throw new IllegalArgumentException("unknown serial operation " + op);
    }
    // A statistic of the filter, after the timer stops, so that the JIT
    // cannot drop the read: Guava keeps the count of bits set as it reads.
    System.out.printf("serial op=%s seconds=%.6f count=%d%n", op, (end - start) / 1e9, f.approximateElementCount());
  }

  public static void main(String[] args) throws IOException {
    if (args.length == 1 && args[0].equals("keys")) {
      keys();
      return;
    }
    if (args.length == 2 && (args[0].equals("readfrom") || args[0].equals("writeto"))) {
      serial(args[0], args[1]);
      return;
    }
    if (args.length != 9 || !args[0].equals("bench")) {
      System.err.println(
          "usage: GuavaBench keys | GuavaBench readfrom|writeto FILE | GuavaBench bench KEY OP N WARMUPMILLIS COUNT MILLIS PROBEHALF HELDOUT");
      System.exit(2);
    }
    Kind<?> kind = kind(args[1]);
    String op = args[2];
    long n = Long.parseLong(args[3]);
    long warmupNs = Long.parseLong(args[4]) * 1_000_000L;
    int count = Integer.parseInt(args[5]);
    long targetNs = Long.parseLong(args[6]) * 1_000_000L;
    int probeHalf = Integer.parseInt(args[7]);
    int heldOut = Integer.parseInt(args[8]);
    System.out.printf(
        "# java.version=%s java.vm.name=%s max_heap_mb=%d%n",
        System.getProperty("java.version"),
        System.getProperty("java.vm.name"),
        Runtime.getRuntime().maxMemory() >> 20);
    switch (op) {
      case "Put":
        benchPut(kind, n, warmupNs, count, targetNs);
        break;
      case "MightContain":
        benchMightContain(kind, n, warmupNs, count, targetNs, probeHalf, heldOut);
        break;
      default:
        throw new IllegalArgumentException("unknown operation " + op);
    }
  }
}
