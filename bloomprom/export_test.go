package bloomprom

// Causes returns the values of the label error, in the order of causes,
// "other" last.
func Causes() []string {
	var out []string
	for _, c := range causes {
		out = append(out, c.label)
	}
	return append(out, otherCause)
}
