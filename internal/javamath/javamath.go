// Package javamath reproduces the results of the few Java floating-point
// operations that Guava's BloomFilter sizing and statistics depend on, so that
// the Go port computes bit-identical numbers.
//
// Go's math package is not enough for that. HotSpot's Math.log and Math.pow
// intrinsics are, in practice, correctly rounded, while math.Log is 1 ulp off
// for some inputs (math.Log(0.01) is -4.605170185988092, Java gives
// -4.605170185988091) and on amd64 is badly wrong for subnormal inputs, and
// math.Pow differs from Java for most (x, k). A single ulp in ln p changes the
// number of bits Guava allocates for some n, so this package computes the
// correctly rounded results instead. Java's saturating (long) cast,
// Math.round and Double.toString are here too, because Go has no direct
// equivalent of them.
package javamath

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Log returns the natural logarithm of x rounded to the nearest float64. That
// is what HotSpot's Math.log intrinsic returns for all but about one input in
// 100,000, where the intrinsic is 1 ulp off. Special cases follow Java: Log of
// a negative number or NaN is NaN, Log(±0) is -Inf, Log(+Inf) is +Inf and
// Log(1) is +0. Subnormal x get full accuracy too, unlike with math.Log on
// amd64.
//
// The logarithm is evaluated in double-double arithmetic with a relative
// error below about 2^-100 before the single final rounding, so the result
// can only be misrounded when ln x lies within that distance of the midpoint
// between two float64 values; random inputs practically never do. Log does
// not allocate.
func Log(x float64) float64 {
	switch {
	case x != x || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	}
	// x = m·2^e with m in [√½, √2), so that |ln m| ≤ ln2/2: the e·ln2 and
	// ln m parts then never cancel catastrophically, and x near 1 has e = 0
	// and an exact m-1, so tiny results keep their relative accuracy.
	// Frexp normalises subnormals.
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}

	// ln m = 2·atanh(s) = 2·(s + s³/3 + s⁵/5 + …) with s = (m-1)/(m+1),
	// |s| ≤ 0.1716. m-1 is exact (Sterbenz), m+1 is kept as a double-double.
	dh, dl := twoSum(m, 1)
	sh, sl := ddDiv(m-1, 0, dh, dl)
	zh, zl := ddMul(sh, sl, sh, sl)
	last := len(atanhCoef) - 1
	ph, pl := atanhCoef[last][0], atanhCoef[last][1]
	for i := last - 1; i >= 0; i-- {
		ph, pl = ddMul(ph, pl, zh, zl)
		ph, pl = ddAdd(ph, pl, atanhCoef[i][0], atanhCoef[i][1])
	}
	lh, ll := ddMul(sh, sl, ph, pl)
	lh, ll = 2*lh, 2*ll

	// e·ln2 with ln2 split into three parts: e has up to 11 bits, so the
	// first two products are exact and the third is far below the error
	// budget.
	fe := float64(e)
	ah, al := twoProd(fe, ln2Hi)
	bh, bl := twoProd(fe, ln2Mid)
	bl += fe * ln2Lo
	ah, al = ddAdd(ah, al, bh, bl)
	// ddAdd returns a normalised pair: its high part is already the sum
	// rounded to nearest, and this is the only rounding of the result.
	rh, _ := ddAdd(ah, al, lh, ll)
	return rh
}

// ln2 as the unevaluated sum ln2Hi + ln2Mid + ln2Lo, accurate to about
// 2^-163. ln2Hi is Java's Math.log(2).
const (
	ln2Hi  = 0x1.62e42fefa39efp-01
	ln2Mid = 0x1.abc9e3b39803fp-56
	ln2Lo  = 0x1.7b57a079a1934p-111
)

// atanhCoef[k] is 1/(2k+1) as a double-double. 23 terms make the truncation
// error of the series below 2^-115 relative for |s| ≤ 0.1716.
var atanhCoef = func() (c [23][2]float64) {
	for k := range c {
		d := float64(2*k + 1)
		hi := 1 / d
		// hi·d - 1 is exact under FMA, so lo carries the next 53 bits.
		lo := -math.FMA(hi, d, -1) / d
		c[k] = [2]float64{hi, lo}
	}
	return c
}()

// twoSum returns s = fl(a+b) and the exact rounding error a+b-s.
func twoSum(a, b float64) (s, err float64) {
	s = a + b
	bb := s - a
	err = (a - (s - bb)) + (b - bb)
	return s, err
}

// fastTwoSum is twoSum for |a| ≥ |b| (or a == 0).
func fastTwoSum(a, b float64) (s, err float64) {
	s = a + b
	err = b - (s - a)
	return s, err
}

// twoProd returns p = fl(a·b) and the exact rounding error a·b-p.
func twoProd(a, b float64) (p, err float64) {
	// The explicit conversion forces p to be rounded: without it the
	// compiler may fuse a*b with a later addition of p into an FMA (the Go
	// spec allows that across statements), and err would no longer be the
	// error of the p that the caller sees.
	p = float64(a * b)
	err = math.FMA(a, b, -p)
	return p, err
}

// ddAdd adds two double-doubles, keeping the low parts' rounding errors so
// that the result is accurate even when the high parts cancel.
func ddAdd(ah, al, bh, bl float64) (float64, float64) {
	s, e := twoSum(ah, bh)
	t, f := twoSum(al, bl)
	e += t
	s, e = fastTwoSum(s, e)
	e += f
	return fastTwoSum(s, e)
}

// ddMul multiplies two double-doubles; the al·bl term is below the error.
func ddMul(ah, al, bh, bl float64) (float64, float64) {
	p, e := twoProd(ah, bh)
	e = math.FMA(ah, bl, e)
	e = math.FMA(al, bh, e)
	return fastTwoSum(p, e)
}

// ddDiv divides two double-doubles by long division with three quotient
// digits, each correcting the remainder left by the previous ones.
func ddDiv(ah, al, bh, bl float64) (float64, float64) {
	q1 := ah / bh
	ph, pl := ddMul(q1, 0, bh, bl)
	rh, rl := ddAdd(ah, al, -ph, -pl)
	q2 := rh / bh
	ph, pl = ddMul(q2, 0, bh, bl)
	rh, _ = ddAdd(rh, rl, -ph, -pl)
	q3 := rh / bh
	q1, q2 = fastTwoSum(q1, q2)
	return ddAdd(q1, q2, q3, 0)
}

// PowInt returns x^k rounded to the nearest float64, which is what Java's
// Math.pow(x, k) returns on HotSpot in all but a few hundredths of a percent
// of cases (there the intrinsic is 1 ulp off). PowInt(x, 0) is 1 for every
// x, NaN included, as in Java; otherwise NaN gives NaN, and zeros and
// infinities give zeros and infinities, negative when x is negative and k is
// odd. Results below the smallest normal float64 are rounded once, directly
// to the subnormal grid. PowInt panics if k is negative. It does not
// allocate.
//
// The power is computed by binary exponentiation on 192-bit integer
// mantissas with a separate exponent, so no intermediate result can
// overflow or underflow. Each product is truncated, so the computed value
// is a lower bound of x^k within a relative k·2^-190 (2^-128 for the largest
// k), and truncation is tracked, so exact ties are recognised and broken to
// even. The result could only be misrounded if x^k lay within that distance
// above a rounding midpoint.
func PowInt(x float64, k int) float64 {
	switch {
	case k < 0:
		panic("javamath: PowInt with negative exponent " + strconv.Itoa(k))
	case k == 0:
		return 1
	case x != x:
		return x
	}
	neg := math.Signbit(x) && k&1 == 1
	ax := math.Abs(x)
	var r float64
	switch {
	case ax == 0:
		r = 0
	case math.IsInf(ax, 1):
		r = ax
	default:
		r = powMant(ax, k)
	}
	if neg {
		return -r
	}
	return r
}

// mant192 is the value w·2^(e-192), where w is the 192-bit integer whose
// little-endian 64-bit limbs are w, with the top bit of w[2] set, so the
// value lies in [2^(e-1), 2^e). sticky records that bits were truncated
// away, which makes the true value strictly larger than the stored one.
type mant192 struct {
	w      [3]uint64
	e      int
	sticky bool
}

// powExpLimit bounds the binary exponent of intermediate powers. Every
// factor of x^k is a power of the same |x|, so once a factor that will still
// be used exceeds this, x^k is certainly out of float64 range on the same
// side, and stopping keeps the exponent arithmetic far from int overflow.
const powExpLimit = 1 << 20

// powMant returns x^k rounded to nearest for finite x > 0 and k > 0.
func powMant(x float64, k int) float64 {
	f, e := math.Frexp(x)
	b := mant192{
		w: [3]uint64{0, 0, (math.Float64bits(f)&(1<<52-1) | 1<<52) << 11},
		e: e,
	}
	r := mant192{w: [3]uint64{0, 0, 1 << 63}, e: 1}
	for {
		if k&1 != 0 {
			r = mul192(r, b)
		}
		k >>= 1
		if k == 0 {
			break
		}
		b = mul192(b, b)
		if b.e > powExpLimit {
			return math.Inf(1)
		}
		if b.e < -powExpLimit {
			return 0
		}
	}
	return r.round()
}

// mul192 returns a·b truncated to 192 bits.
func mul192(a, b mant192) mant192 {
	var p [6]uint64
	for i := 0; i < 3; i++ {
		var carry uint64
		for j := 0; j < 3; j++ {
			hi, lo := bits.Mul64(a.w[i], b.w[j])
			var c uint64
			lo, c = bits.Add64(lo, p[i+j], 0)
			hi += c
			lo, c = bits.Add64(lo, carry, 0)
			hi += c
			p[i+j] = lo
			carry = hi
		}
		p[i+3] = carry
	}
	r := mant192{e: a.e + b.e, sticky: a.sticky || b.sticky}
	// Both factors are in [1/2, 1), so the product is in [1/4, 1) and needs
	// at most a one-bit shift to put the leading bit back on top.
	if p[5]>>63 == 0 {
		r.e--
		r.sticky = r.sticky || p[0] != 0 || p[1] != 0 || p[2]<<1 != 0
		r.w = [3]uint64{p[3]<<1 | p[2]>>63, p[4]<<1 | p[3]>>63, p[5]<<1 | p[4]>>63}
	} else {
		r.sticky = r.sticky || p[0] != 0 || p[1] != 0 || p[2] != 0
		r.w = [3]uint64{p[3], p[4], p[5]}
	}
	return r
}

// round rounds m to the nearest float64, ties to even, directly to the
// precision available at m's magnitude (fewer than 53 bits for subnormals),
// so that there is a single rounding.
func (m mant192) round() float64 {
	if m.e > 1024 {
		return math.Inf(1)
	}
	// Normal results, at least 2^-1022, have e ≥ -1021; below that every
	// step down in e loses a bit of precision.
	p := 53
	if m.e < -1021 {
		p = m.e + 1074
	}
	if p < 0 {
		// m < 2^-1075, less than half the smallest subnormal.
		return 0
	}
	top := m.w[2]
	q := top >> (64 - p) // p == 0 shifts everything out.
	rest := top & (1<<(64-p) - 1)
	half := uint64(1) << (63 - p)
	below := m.w[1] != 0 || m.w[0] != 0 || m.sticky
	if rest > half || (rest == half && (below || q&1 == 1)) {
		q++
	}
	// q ≤ 2^53 converts exactly and q·2^(e-p) is representable (or +Inf), so
	// Ldexp does not round again.
	return math.Ldexp(float64(q), m.e-p)
}

// two63 is 2^63, the first float64 above math.MaxInt64.
const two63 = 1 << 63

// DoubleToLong converts x to int64 as Java's (long) cast does: it truncates
// toward zero, returns math.MaxInt64 and math.MinInt64 for values beyond the
// int64 range (infinities included), and 0 for NaN. Go's own conversion
// leaves out-of-range values implementation-defined.
func DoubleToLong(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= two63:
		return math.MaxInt64
	case x <= -two63:
		return math.MinInt64
	}
	return int64(x)
}

// Round returns the int64 nearest to x with ties rounded toward positive
// infinity, as Java's Math.round(double) does: Round(2.5) is 3, Round(-2.5)
// is -2 and Round(0.49999999999999994) is 0. NaN gives 0, and values beyond
// the int64 range saturate as in DoubleToLong.
func Round(x float64) int64 {
	if x != x {
		return 0
	}
	// floor(x + 1/2) in exact arithmetic: x - Floor(x) is exact, whereas
	// computing x + 0.5 would round 0.49999999999999994 up to 1.
	t := math.Floor(x)
	if x-t >= 0.5 {
		t++
	}
	return DoubleToLong(t)
}

// FormatDouble formats x as Java's Double.toString(double) does, for use in
// messages that must read like Guava's: "NaN", "Infinity", "-Infinity",
// "0.0" and "-0.0"; plain decimal notation with at least one digit after the
// point for 10^-3 ≤ |x| < 10^7 ("0.01", "100.0"); otherwise computerized
// scientific notation ("1.0E-5", "4.9E-324", "1.2345E10").
//
// The digits are the shortest that read back as x, choosing among two-digit
// candidates when a single digit would do, which is what JDK 19 and later
// print. JDK 17 and earlier use an older algorithm that prints a longer digit
// string for some rare values (2.0E23 is printed as 1.9999999999999998E23,
// for example).
func FormatDouble(x float64) string {
	switch {
	case x != x:
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	case x == 0:
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	var sb strings.Builder
	if x < 0 {
		sb.WriteByte('-')
		x = -x
	}
	digits, exp := javaDigits(x)
	switch {
	case exp >= 0 && exp < 7:
		// Integer part: the first exp+1 digits, padded with zeros.
		if len(digits) > exp+1 {
			sb.WriteString(digits[:exp+1])
			sb.WriteByte('.')
			sb.WriteString(digits[exp+1:])
		} else {
			sb.WriteString(digits)
			sb.WriteString(strings.Repeat("0", exp+1-len(digits)))
			sb.WriteString(".0")
		}
	case exp < 0 && exp >= -3:
		sb.WriteString("0.")
		sb.WriteString(strings.Repeat("0", -exp-1))
		sb.WriteString(digits)
	default:
		sb.WriteString(digits[:1])
		sb.WriteByte('.')
		if len(digits) > 1 {
			sb.WriteString(digits[1:])
		} else {
			sb.WriteByte('0')
		}
		sb.WriteByte('E')
		sb.WriteString(strconv.Itoa(exp))
	}
	return sb.String()
}

// javaDigits returns the significant decimal digits d1d2…dn (no trailing
// zeros) and exponent exp of Java's Double.toString for finite x > 0, where
// x reads as d1.d2…dn·10^exp.
//
// Java takes the shortest decimals that round to x, but when the shortest is
// a single digit it also considers two-digit ones and takes the one closest
// to x. That only makes a difference for the smallest subnormals, where the
// spacing of float64 values is coarser than two digits: Double.MIN_VALUE is
// "4.9E-324", where the shortest round-trip string is "5e-324".
func javaDigits(x float64) (string, int) {
	digits, exp := splitE(strconv.FormatFloat(x, 'e', -1, 64))
	if len(digits) == 1 {
		s := strconv.FormatFloat(x, 'e', 1, 64)
		if v, err := strconv.ParseFloat(s, 64); err == nil && v == x {
			digits, exp = splitE(s)
		}
	}
	return digits, exp
}

// splitE splits strconv's 'e' format, "d.ddde±XX", into its digits without
// trailing zeros and its exponent.
func splitE(s string) (string, int) {
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr) // Atoi accepts the leading sign.
	digits := strings.Replace(mant, ".", "", 1)
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		digits = "0"
	}
	return digits, exp
}
