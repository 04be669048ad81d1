/*
 * ScalableInterop.java: the Guava side of TestScalableJavaInterop
 * (bloom/scalable_interop_test.go).
 *
 *     java -cp <classes>:<guava.jar> ScalableInterop <stream> <cases>
 *
 * <stream> is what the Go library's Scalable.WriteTo wrote, for strings
 * funnelled with Funnels.stringFunnel(UTF_8). ScalableInterop reads it as
 * Scalable.WriteTo's documentation tells a Java program to: BloomFilter.readFrom
 * until the stream ends, and a value might be present when any stage says so.
 *
 * <cases> holds lines of two kinds:
 *
 *     stage <expectedInsertions> <fppBits>   the sizing Go says stage i has
 *     p <hex>                                a value to ask about, UTF-8 in hex
 *
 * fppBits is Double.doubleToRawLongBits in hex. It prints
 *
 *     stage <i> compatible=<bool> count=<long> fpp=<hex bits>
 *
 * for each stage read, where compatible is whether the stage isCompatible
 * with BloomFilter.create(funnel, expectedInsertions, fpp), the filter Guava
 * itself would make for that sizing, count is approximateElementCount() and
 * fpp expectedFpp(); then
 *
 *     answers <0|1...>
 *     end <stages>
 *
 * with one answer per p line, in order. Any failure is an exception and a
 * non-zero exit status.
 */

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

public final class ScalableInterop {
  public static void main(String[] args) throws Exception {
    Funnel<CharSequence> funnel = Funnels.stringFunnel(UTF_8);

    List<BloomFilter<CharSequence>> stages = new ArrayList<>();
    try (InputStream file = new BufferedInputStream(new FileInputStream(args[0]))) {
      PushbackInputStream in = new PushbackInputStream(file);
      for (int b; (b = in.read()) != -1; ) {
        in.unread(b);
        stages.add(BloomFilter.readFrom(in, funnel));
      }
    }

    List<String> lines = Files.readAllLines(Paths.get(args[1]), UTF_8);
    StringBuilder out = new StringBuilder();
    StringBuilder answers = new StringBuilder();
    int stage = 0;
    for (String line : lines) {
      String[] f = line.split(" ");
      switch (f[0]) {
        case "stage":
          {
            long n = Long.parseLong(f[1]);
            double p = Double.longBitsToDouble(Long.parseUnsignedLong(f[2], 16));
            if (stage < stages.size()) {
              BloomFilter<CharSequence> read = stages.get(stage);
              BloomFilter<CharSequence> own = BloomFilter.create(funnel, n, p);
              out.append("stage ").append(stage)
                  .append(" compatible=").append(read.isCompatible(own))
                  .append(" count=").append(read.approximateElementCount())
                  .append(" fpp=").append(Long.toHexString(Double.doubleToRawLongBits(read.expectedFpp())))
                  .append('\n');
            }
            stage++;
            break;
          }
        case "p":
          {
            String value = new String(hex(f[1]), UTF_8);
            answers.append(stages.stream().anyMatch(s -> s.mightContain(value)) ? '1' : '0');
            break;
          }
        default:
          throw new IllegalArgumentException("bad line: " + line);
      }
    }
    out.append("answers ").append(answers).append('\n');
    out.append("end ").append(stages.size()).append('\n');
    System.out.print(out);
  }

  private static byte[] hex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return b;
  }
}
