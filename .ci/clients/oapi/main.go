// Command oapi is CI's scenario for a client that oapi-codegen generates, with its default
// configuration, from the document a live mgmtapi serves. .ci/clients/run builds it in a
// throwaway module beside the generated package (imported as mgmtapi-ci/client/api); it is not
// part of the mgmtapi module.
//
// Usage: oapi <base URL> <API key>. It creates a recording-rule set, lists the sets, reads the
// set by id, and sends an invalid set, whose 400 must decode as the Error type with code 400 and
// a message naming the field. Any other outcome exits 1 with what was expected and what came.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"mgmtapi-ci/client/api"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: oapi <base URL> <API key>")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "oapi-codegen client:", err)
		os.Exit(1)
	}
	fmt.Println("oapi-codegen client: create, list, get and a decoded 400 all as expected")
}

func run(ctx context.Context, baseURL, key string) error {
	c, err := api.NewClientWithResponses(baseURL, api.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		return err
	}

	// Optional fields are pointers in oapi-codegen's types.
	interval := int64(60)
	rules := []api.RecordingRuleInput{{
		Record: "job:http_requests:rate5m",
		Expr:   "sum by (job) (rate(http_requests_total[5m]))",
	}}
	groups := []api.RecordingRuleGroupInput{{Name: "latency", Interval: &interval, Rules: &rules}}
	created, err := c.CreateRecordingRuleSetWithResponse(ctx, api.RecordingRuleSetInput{Name: "oapi-codegen", Groups: &groups})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if created.JSON200 == nil || created.JSON200.Id == "" {
		return fmt.Errorf("create: status %d, body %s; want 200 with an id", created.StatusCode(), created.Body)
	}
	id := created.JSON200.Id

	list, err := c.ListRecordingRuleSetsWithResponse(ctx)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	if list.JSON200 == nil {
		return fmt.Errorf("list: status %d, body %s; want 200", list.StatusCode(), list.Body)
	}
	listed := false
	for _, s := range list.JSON200.Sets {
		listed = listed || s.Id == id
	}
	if !listed {
		return fmt.Errorf("list: %d sets without the created %s", len(list.JSON200.Sets), id)
	}

	got, err := c.GetRecordingRuleSetWithResponse(ctx, id)
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	if got.JSON200 == nil || got.JSON200.Id != id || got.JSON200.Name != "oapi-codegen" ||
		len(got.JSON200.Groups) != 1 || len(got.JSON200.Groups[0].Rules) != 1 ||
		got.JSON200.Groups[0].Rules[0].Record != "job:http_requests:rate5m" {
		return fmt.Errorf("get %s: status %d, body %s; want the set as created", id, got.StatusCode(), got.Body)
	}

	badRules := []api.RecordingRuleInput{{Record: "r", Expr: "sum by (job (up)"}}
	bad := []api.RecordingRuleGroupInput{{Name: "g", Rules: &badRules}}
	refused, err := c.CreateRecordingRuleSetWithResponse(ctx, api.RecordingRuleSetInput{Name: "bad", Groups: &bad})
	if err != nil {
		return fmt.Errorf("invalid create: %w", err)
	}
	if refused.StatusCode() != 400 || refused.JSONDefault == nil || refused.JSONDefault.Code != 400 ||
		!strings.Contains(refused.JSONDefault.Message, "groups[0]") || !strings.Contains(refused.JSONDefault.Message, "expr") {
		return fmt.Errorf("invalid create: status %d, body %s; want 400 decoded as Error with code 400 and a message naming groups[0] and expr",
			refused.StatusCode(), refused.Body)
	}
	return nil
}
