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

// DayProbe sets how many of a rollup key's latest updates a day row looks through for its last
// update before it reads its day whole (0: always whole) until the returned function restores it.
func DayProbe(n int64) (restore func()) {
	old := dayProbe.Swap(n)
	return func() { dayProbe.Store(old) }
}
