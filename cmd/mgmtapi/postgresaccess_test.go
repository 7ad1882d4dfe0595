package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// A server run with --postgres-access exclusive holds its PostgreSQL database alone: a second
// server and `mgmtapi keys create` are refused while it runs, naming the flag; its GET by id
// gives what its last write stored; once it stops, a shared server starts on the database.
func TestPostgresAccessExclusive(t *testing.T) {
	if os.Getenv(apitest.DatabaseURLVariable) == "" {
		t.Skip(apitest.DatabaseURLVariable + " is not set")
	}
	schema := apitest.FreshSchema(t)
	env := map[string]string{"MGMTAPI_BOOTSTRAP_KEY": chosenKey}
	p := start(t, env, "--database-url", schema, "--postgres-access", "exclusive")
	if !strings.Contains(p.stdout.String()+p.stderr.String(), "access=exclusive") {
		t.Fatalf("the start log does not say the database is held alone:\n%s%s", p.stdout, p.stderr)
	}
	const sets = "/mgmt/openapi/5/recording-rules/recording-rules/v1"
	status, body := p.call(t, "POST", sets, chosenKey, `{"name":"first","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`)
	if status != 200 {
		t.Fatalf("create: %d %s", status, body)
	}
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(body), &created); err != nil || created.ID == "" {
		t.Fatalf("create answered %s (%v)", body, err)
	}
	name := func() string {
		t.Helper()
		status, body := p.get(t, sets+"/"+created.ID, chosenKey)
		if status != 200 {
			t.Fatalf("get: %d %s", status, body)
		}
		var got struct{ Name string }
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		return got.Name
	}
	for range 3 { // the first reads the database, the others may be kept answers
		if got := name(); got != "first" {
			t.Fatalf("name = %q, want first", got)
		}
	}
	if status, body := p.call(t, "PUT", sets+"/"+created.ID, chosenKey,
		`{"name":"second","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`); status != 200 {
		t.Fatalf("replace: %d %s", status, body)
	}
	if got := name(); got != "second" {
		t.Fatalf("after the replace, name = %q, want second", got)
	}

	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--database-url", schema},
		{"serve", "--addr", "127.0.0.1:0", "--database-url", schema, "--postgres-access", "exclusive"},
		{"keys", "create", "--team", "default", "--database-url", schema},
	} {
		// A server that starts after all serves until ctx ends, and the test fails.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var out, errOut bytes.Buffer
		err := run(ctx, args, func(k string) string { return env[k] }, &out, &errOut, nil)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "--postgres-access") {
			t.Fatalf("%v beside a server holding the database alone: %v, want a refusal naming --postgres-access", args, err)
		}
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	shared := start(t, env, "--database-url", schema)
	if status, body := shared.get(t, sets+"/"+created.ID, chosenKey); status != 200 || !strings.Contains(body, `"second"`) {
		t.Fatalf("get through a shared server after the exclusive one stopped: %d %s", status, body)
	}
}
