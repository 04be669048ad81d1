package strategy

type mitz64 struct{}

func (mitz64) Ordinal() int   { return 1 }
func (mitz64) String() string { return "MURMUR128_MITZ_64" }
func (mitz64) isStrategy()    {}
