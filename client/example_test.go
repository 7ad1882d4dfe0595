package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/client"
	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/server"
	"github.com/mgmtapi/mgmtapi/internal/teams"
)

// serverURL and apiKey reach the mgmtapi that TestMain runs for the examples: a fresh SQLite
// database in a temporary directory whose bootstrap team holds apiKey.
var serverURL, apiKey string

func Example() {
	ctx := context.Background()
	// A URL reaches a deployment; a bare host name such as "api.eu2.example.com" means https on it.
	c, err := client.New(serverURL, apiKey)
	if err != nil {
		fmt.Println(err)
		return
	}

	created, err := c.CreateRecordingRuleSet(ctx, &client.RecordingRuleSetInput{
		Name: "api",
		Groups: []client.RecordingRuleGroupInput{{
			Name:     "latency",
			Interval: client.NewOptInt64(60),
			Rules: []client.RecordingRuleInput{{
				Record: "job:http_requests:rate5m",
				Expr:   "sum by (job) (rate(http_requests_total[5m]))",
			}},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := c.GetRecordingRuleSet(ctx, client.GetRecordingRuleSetParams{ID: created.ID})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.Name, set.Groups[0].Name, set.Groups[0].Rules[0].Record)

	list, err := c.ListRecordingRuleSets(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(list.Sets), "set")

	// A refused request is an *client.ErrorStatusCode carrying the server's {code, message}.
	_, err = c.CreateRecordingRuleSet(ctx, &client.RecordingRuleSetInput{
		Name: "bad",
		Groups: []client.RecordingRuleGroupInput{{
			Name:  "g",
			Rules: []client.RecordingRuleInput{{Record: "r", Expr: "sum(up"}},
		}},
	})
	var refused *client.ErrorStatusCode
	if errors.As(err, &refused) {
		fmt.Println(refused.StatusCode, refused.Response.Code)
	}
	// Output:
	// api latency job:http_requests:rate5m
	// 1 set
	// 400 400
}

func TestMain(m *testing.M) {
	url, key, stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the example server:", err)
		os.Exit(1)
	}
	serverURL, apiKey = url, key
	code := m.Run()
	stop()
	os.Exit(code)
}

// startServer runs the whole server stack, as `mgmtapi serve` does, on a fresh SQLite database.
func startServer() (url, key string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "mgmtapi-client-example")
	if err != nil {
		return "", "", nil, err
	}
	ctx := context.Background()
	database, err := db.Open(ctx, db.Options{DataDir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return "", "", nil, err
	}
	key = "mgmt_client_example_key_0123456789abcdef"
	if _, err := teams.Bootstrap(ctx, database, key); err != nil {
		database.Close()
		os.RemoveAll(dir)
		return "", "", nil, err
	}
	a, err := api.New(api.Options{DB: database, Authn: auth.NewAuthenticator(database, nil), PolicyLimit: 200})
	if err != nil {
		database.Close()
		os.RemoveAll(dir)
		return "", "", nil, err
	}
	yamlDoc, jsonDoc, err := spec.Documents("http://127.0.0.1", "local")
	if err != nil {
		database.Close()
		os.RemoveAll(dir)
		return "", "", nil, err
	}
	srv := httptest.NewServer(server.New(server.Options{
		API: a, WriteError: api.WriteError, Ready: database.Ping, DBStats: database.Stats,
		OpenAPIJSON: jsonDoc, OpenAPIYAML: yamlDoc, MaxBodyBytes: 16 << 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}))
	return srv.URL, key, func() {
		srv.Close()
		database.Close()
		os.RemoveAll(dir)
	}, nil
}
