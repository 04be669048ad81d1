package strategy

type mitz32 struct{}

func (mitz32) Ordinal() int   { return 0 }
func (mitz32) String() string { return "MURMUR128_MITZ_32" }
func (mitz32) isStrategy()    {}
