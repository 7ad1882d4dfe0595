package routers

// LastTriggers is lastTriggers, for the benchmark of the retrigger lookup.
var LastTriggers = lastTriggers

// LastTriggersQuery is lastTriggersQuery, for the benchmark's query plan.
const LastTriggersQuery = lastTriggersQuery
