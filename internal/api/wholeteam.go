package api

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// wholeTeamSlots is how many whole-team documents the process builds at once: the configuration
// document (export and apply) and the Prometheus rule file. Each holds the team's whole
// configuration, read, parsed and rendered, for its time: on a team of 300 SLOs and 300
// dashboards one rule file allocates about 70 MB and one export 40 MB, where any other answer
// holds one resource or one page. Without a bound, a burst of them multiplies that by the number
// of requests in the handler (the mutation run of cmd/mgmtload, 64 connections, peaked above
// 560 MiB); with it, the peak is at most this many documents, and the others wait their turn.
const wholeTeamSlots = 2

// wholeTeamTurns hands out the slots of wholeTeamSlots.
type wholeTeamTurns chan struct{}

func newWholeTeamTurns() wholeTeamTurns { return make(wholeTeamTurns, wholeTeamSlots) }

// wait takes a slot, waiting for one as long as ctx lasts, and returns the function that gives
// it back. It fails only with ctx's error (the client left, or the server is stopping).
func (t wholeTeamTurns) wait(ctx context.Context) (done func(), err error) {
	select {
	case t <- struct{}{}:
		return func() { <-t }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// GetPrometheusRules answers the team's rule file (promrules), one of wholeTeamSlots at a time.
func (h handler) GetPrometheusRules(ctx context.Context, params oas.GetPrometheusRulesParams) (oas.GetPrometheusRulesRes, error) {
	done, err := h.wholeTeam.wait(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return h.RuleFileHandler.GetPrometheusRules(ctx, params)
}
