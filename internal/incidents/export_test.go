package incidents

// FoldEveryGroup makes E18 fold every group in Go (the plan without paging in SQL) until the
// returned function restores the default.
func FoldEveryGroup() (restore func()) {
	foldEveryGroup.Store(true)
	return func() { foldEveryGroup.Store(false) }
}

// GenericAggregations makes E18 answer by the generic GROUP BY over the incidents (no counts, label
// rows or rollup) until the returned function restores the default.
func GenericAggregations() (restore func()) {
	genericOnly.Store(true)
	return func() { genericOnly.Store(false) }
}

// NoPageWalk makes E18 sort the matching label rows for a page of groups by a time, never walk
// the time's index, until the returned function restores the default.
func NoPageWalk() (restore func()) {
	noPageWalk.Store(true)
	return func() { noPageWalk.Store(false) }
}
