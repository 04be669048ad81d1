package funnel

// Bytes feeds a byte slice as it is, as Guava's Funnels.byteArrayFunnel()
// does. It is ready to use.
var Bytes Funnel[[]byte] = bytesFunnel{}

// String feeds a string's bytes, as Guava's Funnels.stringFunnel(UTF_8) does
// for the same text. It is ready to use.
var String Funnel[string] = stringFunnel{}

// UnencodedChars feeds a string as UTF-16 code units, little-endian, as
// Guava's Funnels.unencodedCharsFunnel() does for the same text (see
// [Sink.PutUnencodedChars]). It is ready to use.
var UnencodedChars Funnel[string] = unencodedCharsFunnel{}

// Int32 feeds an int32 as 4 bytes, little-endian, as Guava's
// Funnels.integerFunnel() does. It is ready to use.
var Int32 Funnel[int32] = int32Funnel{}

// Int64 feeds an int64 as 8 bytes, little-endian, as Guava's
// Funnels.longFunnel() does. It is ready to use.
var Int64 Funnel[int64] = int64Funnel{}

type bytesFunnel struct{}

func (bytesFunnel) Funnel(v []byte, into Sink) { into.PutBytes(v) }
func (bytesFunnel) String() string             { return "funnel.Bytes" }

type stringFunnel struct{}

func (stringFunnel) Funnel(v string, into Sink) { into.PutString(v) }
func (stringFunnel) String() string             { return "funnel.String" }

type unencodedCharsFunnel struct{}

func (unencodedCharsFunnel) Funnel(v string, into Sink) { into.PutUnencodedChars(v) }
func (unencodedCharsFunnel) String() string             { return "funnel.UnencodedChars" }

type int32Funnel struct{}

func (int32Funnel) Funnel(v int32, into Sink) { into.PutInt32(v) }
func (int32Funnel) String() string            { return "funnel.Int32" }

type int64Funnel struct{}

func (int64Funnel) Funnel(v int64, into Sink) { into.PutInt64(v) }
func (int64Funnel) String() string            { return "funnel.Int64" }
