package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// TestUnknownFields: the members an operation's body schema does not declare are found by
// path, at any depth, while maps (additionalProperties) and the members of a oneOf's
// alternatives are known.
func TestUnknownFields(t *testing.T) {
	for _, c := range []struct {
		operation, body string
		want            []string
	}{
		{"CreateRecordingRuleSet", `{"name":"x","grups":[],"groups":[{"name":"g","rulez":[],` +
			`"rules":[{"record":"r","expr":"up","labels":{"any":"x"}}]}]}`, []string{"grups", "groups[0].rulez"}},
		{"CreateRecordingRuleSet", `{"name":"x","groups":[]}`, nil},
		{"CreateAlertDef", `{"alertDefProperties":{"name":"n","metricThreshold":{"metricFilter":{"promql":"up"},"rulez":[]},"priorty":"P1"}}`,
			[]string{"alertDefProperties.metricThreshold.rulez", "alertDefProperties.priorty"}},
		{"CreateRecordingRuleSet", `not json`, nil},
		{"NoSuchOperation", `{"a":1}`, nil},
	} {
		if got := unknownFields(c.operation, []byte(c.body)); !slices.Equal(got, c.want) {
			t.Errorf("%s %s: %v, want %v", c.operation, c.body, got, c.want)
		}
	}
}

// TestUnknownFieldsAreLoggedAtDebug: read through to its end, a body with an unknown field gives
// one DEBUG line naming it; at INFO the body is not even wrapped.
func TestUnknownFieldsAreLoggedAtDebug(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	defer slog.SetDefault(old)
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	body := io.NopCloser(strings.NewReader(`{"name":"x","grups":[]}`))
	if _, err := io.ReadAll(watchUnknownFields(context.Background(), "CreateRecordingRuleSet", body)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `level=DEBUG msg="request body fields this server does not know; ignored" operation=CreateRecordingRuleSet fields=[grups]`) {
		t.Fatalf("log:\n%s", logs.String())
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if got := watchUnknownFields(context.Background(), "CreateRecordingRuleSet", body); got != body {
		t.Fatal("at INFO the body is wrapped")
	}
}
