package server

import (
	"context"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Database faults are failures of the database that say nothing about the request (see
// internal/db, Fault): the API answers them 503 (the database cannot be reached or used) or 507
// (its storage is full) with Retry-After, never 500, 401 or 403, so that clients and
// Alertmanager retry.

// storageFullRetrySeconds is the Retry-After of a write refused for a full disk: space comes back
// when an operator frees it, not in a second.
const storageFullRetrySeconds = 10

// AnswerDatabaseFault marks the answer of the request whose context this is as one for a failure
// of the database, fault being its kind ("unavailable" or "storage_full"): it sets Retry-After on
// the answer (1 to 3 seconds at random for an unavailable database, as for a shed request; 10 for
// a full disk) and counts it in mgmtapi_database_faults_total. It returns the seconds of
// Retry-After, for the message. Outside a request served by New's handler it sets nothing and
// returns the same seconds.
func AnswerDatabaseFault(ctx context.Context, fault string) int {
	values := retryAfterValues()
	if fault == "storage_full" {
		values = []string{strconv.Itoa(storageFullRetrySeconds)}
	}
	seconds, _ := strconv.Atoi(values[0])
	req, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		return seconds
	}
	req.header["Retry-After"] = values
	req.handler.metrics.databaseFaults.WithLabelValues(fault).Inc()
	return seconds
}

func newDatabaseFaults(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mgmtapi_database_faults_total",
		Help: "API requests answered 503 or 507 because the database failed: unavailable (cannot be reached or used) or storage_full.",
	}, []string{"fault"})
	for _, fault := range []string{"unavailable", "storage_full"} {
		c.WithLabelValues(fault)
	}
	reg.MustRegister(c)
	return c
}
