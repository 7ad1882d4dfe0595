package audit

// PruneInBatches is Prune with a batch size of the test's choice.
var PruneInBatches = prune
