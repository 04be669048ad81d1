package bitarray

import (
	"encoding/binary"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Guava's writeTo format stores each word as 8 bytes, big-endian. The
// functions here move words between that encoding and an Array's native
// words in one pass each, so that a filter is read and written at about
// the speed of copying its bytes.

// littleEndian reports whether this platform stores a word's least
// significant byte first, as every platform Go runs on does except s390x,
// ppc64 and the big-endian MIPS.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// WordBytes returns the memory of words as 8·len(words) bytes, so that a
// reader can read a filter's encoding straight into the words that will
// hold it; [FromBigEndian] then turns the bytes read into words.
func WordBytes(words []uint64) []byte {
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 8*len(words))
}

// FromBigEndian turns words whose memory holds their encoding, as read
// into [WordBytes](words), into those words, in place. On a big-endian
// platform there is nothing to do.
func FromBigEndian(words []uint64) {
	if !littleEndian {
		return
	}
	for i, w := range words {
		words[i] = bits.ReverseBytes64(w)
	}
}

// chunkWords is how many words DecodeWords and Encode convert in one call of
// their loop, which, having no calls in it, the goroutine cannot be
// preempted in: the garbage collector, to stop the world, waits for the
// chunk to end, about 20 µs for 256 KiB, rather than for a whole filter of
// hundreds of megabytes. TestPreemptibleLoops checks that the functions
// around the chunks can be preempted.
const chunkWords = 32 << 10

// Populate has the kernel map in the pages of words, new memory about to be
// written, from a system call, where writing them would take a page fault
// each: the garbage collector waits for a goroutine in a page fault to stop
// the world, but not for one in a system call, and a fault on a huge page
// can take the kernel milliseconds of compaction. Callers populate a chunk
// at a time, just before writing it, so that the pages the kernel has just
// zeroed are still in the caches. Where the kernel cannot (before Linux
// 5.14, and elsewhere), Populate does nothing.
func Populate(words []uint64) { populate(WordBytes(words)) }

// DecodeWords sets each word of dst to the word that src encodes at its
// place: dst[i] to the big-endian word at src[8·i:]. src must hold at least
// 8·len(dst) bytes. It does not populate dst: decoding into new memory of a
// gigabyte, on huge pages, took three times as long populated a chunk at a
// time as faulted in by the decoding (in bench's cmd/serial, on the AMD
// guest), and a fault on a huge page holds the garbage collector up for
// the time of that one fault.
func DecodeWords(dst []uint64, src []byte) {
	for len(dst) > 0 {
		n := min(len(dst), chunkWords)
		decodeChunk(dst[:n], src[:8*n])
		dst, src = dst[n:], src[8*n:]
	}
}

// CopyWords copies src into dst, new memory, a chunk at a time, each
// populated first (see Populate). Reading a gigabyte from a stream of
// unknown size, which copies the first half so, took 0.3 to 0.6 s where
// copying into pages faulted in by the copy took 0.5 to 3.5 (in bench's
// cmd/serial, on the AMD guest).
func CopyWords(dst, src []uint64) {
	for len(src) > 0 {
		n := min(len(src), chunkWords)
		Populate(dst[:n])
		copy(dst[:n], src[:n])
		dst, src = dst[n:], src[n:]
	}
}

func decodeChunk(dst []uint64, src []byte) {
	src = src[:8*len(dst)]
	// Eight words a step, with one bounds check each: a check per word
	// took the loop to half the speed of a copy.
	for len(dst) >= 8 {
		d, s := (*[8]uint64)(dst), (*[64]byte)(src)
		d[0] = binary.BigEndian.Uint64(s[0:])
		d[1] = binary.BigEndian.Uint64(s[8:])
		d[2] = binary.BigEndian.Uint64(s[16:])
		d[3] = binary.BigEndian.Uint64(s[24:])
		d[4] = binary.BigEndian.Uint64(s[32:])
		d[5] = binary.BigEndian.Uint64(s[40:])
		d[6] = binary.BigEndian.Uint64(s[48:])
		d[7] = binary.BigEndian.Uint64(s[56:])
		dst, src = dst[8:], src[64:]
	}
	for i := range dst {
		dst[i] = binary.BigEndian.Uint64(src[8*i:])
	}
}

// Encode writes the words of a from word from on into dst, 8 bytes each,
// big-endian, as many as dst holds: len(dst)/8 words, which must lie within
// a. Each word is read atomically, so concurrent Sets may or may not show.
//
// Encode splits a dst of 32 MiB or more among up to GOMAXPROCS goroutines:
// a dst that nothing has touched yet, as MarshalBinary's, costs a page fault
// per page on first write, most of the time of its encoding, and the faults
// of different threads are served in parallel.
func (a *Array) Encode(dst []byte, from int) {
	w := a.words[from : from+len(dst)/8]
	if p := min(runtime.GOMAXPROCS(0), len(w)/parallelWords); p > 1 {
		encodeParallel(dst, w, p)
		return
	}
	encodeWords(dst, w)
}

// parallelWords is the least number of words each goroutine of a parallel
// Encode takes, 16 MiB: enough that starting it costs nothing beside them.
const parallelWords = 2 << 20

func encodeParallel(dst []byte, w []uint64, p int) {
	var wg sync.WaitGroup
	part := (len(w) + p - 1) / p
	for len(w) > 0 {
		n := min(part, len(w))
		d, s := dst[:8*n], w[:n]
		wg.Add(1)
		go func() { defer wg.Done(); encodeWords(d, s) }()
		dst, w = dst[8*n:], w[n:]
	}
	wg.Wait()
}

func encodeWords(dst []byte, w []uint64) {
	for len(w) > 0 {
		n := min(len(w), chunkWords)
		encodeChunk(dst[:8*n], w[:n])
		dst, w = dst[8*n:], w[n:]
	}
}

func encodeChunk(dst []byte, w []uint64) {
	dst = dst[:8*len(w)]
	// Eight words a step, as decodeChunk does.
	for len(w) >= 8 {
		s, d := (*[8]uint64)(w), (*[64]byte)(dst)
		binary.BigEndian.PutUint64(d[0:], atomic.LoadUint64(&s[0]))
		binary.BigEndian.PutUint64(d[8:], atomic.LoadUint64(&s[1]))
		binary.BigEndian.PutUint64(d[16:], atomic.LoadUint64(&s[2]))
		binary.BigEndian.PutUint64(d[24:], atomic.LoadUint64(&s[3]))
		binary.BigEndian.PutUint64(d[32:], atomic.LoadUint64(&s[4]))
		binary.BigEndian.PutUint64(d[40:], atomic.LoadUint64(&s[5]))
		binary.BigEndian.PutUint64(d[48:], atomic.LoadUint64(&s[6]))
		binary.BigEndian.PutUint64(d[56:], atomic.LoadUint64(&s[7]))
		w, dst = w[8:], dst[64:]
	}
	for i := range w {
		binary.BigEndian.PutUint64(dst[8*i:], atomic.LoadUint64(&w[i]))
	}
}
