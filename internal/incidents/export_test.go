package incidents

// FoldEveryGroup makes E18 fold every group in Go (the plan without paging in SQL) until the
// returned function restores the default.
func FoldEveryGroup() (restore func()) {
	foldEveryGroup.Store(true)
	return func() { foldEveryGroup.Store(false) }
}
