// Command ogen is CI's scenario for a client that ogen (the version pinned in mgmtapi's go.mod)
// generates from the document a live mgmtapi serves. .ci/clients/run builds it in a throwaway
// module beside the generated package (imported as mgmtapi-ci/client/api); it is not part of the
// mgmtapi module.
//
// Usage: ogen <base URL> <API key>. It creates a recording-rule set, lists the sets, reads the
// set by id, and sends an invalid set, whose 400 must come back as *api.ErrorStatusCode (the Error
// type) with code 400 and a message naming the field. Any other outcome exits 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ogen-go/ogen/ogenerrors"

	"mgmtapi-ci/client/api"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ogen <base URL> <API key>")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "ogen client:", err)
		os.Exit(1)
	}
	fmt.Println("ogen client: create, list, get and a decoded 400 all as expected")
}

// keys sends the team key as a Bearer value and no operator key.
type keys string

func (k keys) ApiKey(context.Context, api.OperationName) (api.ApiKey, error) {
	return api.ApiKey{APIKey: "Bearer " + string(k)}, nil
}

func (k keys) OperatorKey(context.Context, api.OperationName) (api.OperatorKey, error) {
	return api.OperatorKey{}, ogenerrors.ErrSkipClientSecurity
}

func run(ctx context.Context, baseURL, key string) error {
	c, err := api.NewClient(baseURL, keys(key))
	if err != nil {
		return err
	}

	created, err := c.CreateRecordingRuleSet(ctx, &api.RecordingRuleSetInput{
		Name: "ogen",
		Groups: []api.RecordingRuleGroupInput{{
			Name:     "latency",
			Interval: api.NewOptInt64(60),
			Rules: []api.RecordingRuleInput{{
				Record: "job:http_requests:rate5m",
				Expr:   "sum by (job) (rate(http_requests_total[5m]))",
			}},
		}},
	})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if created.ID == "" {
		return fmt.Errorf("create: %+v; want an id", created)
	}

	list, err := c.ListRecordingRuleSets(ctx)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	listed := false
	for _, s := range list.Sets {
		listed = listed || s.ID == created.ID
	}
	if !listed {
		return fmt.Errorf("list: %d sets without the created %s", len(list.Sets), created.ID)
	}

	got, err := c.GetRecordingRuleSet(ctx, api.GetRecordingRuleSetParams{ID: created.ID})
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	if got.ID != created.ID || got.Name != "ogen" || len(got.Groups) != 1 || len(got.Groups[0].Rules) != 1 ||
		got.Groups[0].Rules[0].Record != "job:http_requests:rate5m" {
		return fmt.Errorf("get %s: %+v; want the set as created", created.ID, got)
	}

	_, err = c.CreateRecordingRuleSet(ctx, &api.RecordingRuleSetInput{
		Name:   "bad",
		Groups: []api.RecordingRuleGroupInput{{Name: "g", Rules: []api.RecordingRuleInput{{Record: "r", Expr: "sum by (job (up)"}}}},
	})
	var refused *api.ErrorStatusCode
	if !errors.As(err, &refused) {
		return fmt.Errorf("invalid create: %v (%T); want *api.ErrorStatusCode", err, err)
	}
	if refused.StatusCode != 400 || refused.Response.Code != 400 ||
		!strings.Contains(refused.Response.Message, "groups[0]") || !strings.Contains(refused.Response.Message, "expr") {
		return fmt.Errorf("invalid create: %d %+v; want 400 decoded as Error with code 400 and a message naming groups[0] and expr",
			refused.StatusCode, refused.Response)
	}
	return nil
}
