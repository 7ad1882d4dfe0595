package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-faster/yaml"
)

const applyUsage = `usage: mgmtapi apply -f FILE [--dry-run] [--prune] [--verbose] [--url URL] [--key KEY]

Makes the configuration of the key's team equal to the document in FILE (YAML or JSON, as
mgmtapi export writes it; "-" reads standard input), in one transaction (POST /config/v1/apply),
and prints the plan: + create, ~ update (with each field that changes: ~ groups[0].rules[0].expr
"a" → "b"), - delete (with --prune only), and the number of resources left unchanged (listed
with --verbose). A resource without an id is the team's resource of the same name when exactly
one of the area has that name (the plan says "matched by name"); otherwise it is created. With
--dry-run nothing changes. The key needs
org-settings:UpdateConfig and the write permission of every area the plan changes; it is read from --key or
MGMTAPI_KEY and never printed. The URL is --url, else MGMTAPI_URL, else http://127.0.0.1:8080.

`

// progressThreshold is the number of resources from which apply says what it sends and, while
// the server works, how long it has waited.
const progressThreshold = 200

// progressEvery is how often apply reports that it still waits for a large document's plan.
var progressEvery = 5 * time.Second

// applyCommand is the apply command: the document of -f applied, and its plan printed.
func applyCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mgmtapi apply", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url, key := configFlags(fs, getenv, applyUsage)
	file := fs.String("f", "", `the document to apply (required; "-" for standard input)`)
	dryRun := fs.Bool("dry-run", false, "print the plan and change nothing")
	prune := fs.Bool("prune", false, "delete the resources of the document's areas that it does not hold")
	verbose := fs.Bool("verbose", false, "list the unchanged resources too")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("apply: unexpected argument %q; the document is given with -f", fs.Arg(0))
	case *file == "":
		return errors.New("apply: -f: must name the document to apply (\"-\" for standard input)")
	}
	c, err := newConfigClient("apply", *url, *key, getenv)
	if err != nil {
		return err
	}
	var doc []byte
	if *file == "-" {
		doc, err = io.ReadAll(os.Stdin)
	} else {
		doc, err = os.ReadFile(*file)
	}
	if err != nil {
		return fmt.Errorf("apply: -f: %w", err)
	}
	contentType := "application/yaml"
	if strings.HasSuffix(*file, ".json") || bytes.HasPrefix(bytes.TrimSpace(doc), []byte("{")) {
		contentType = "application/json"
	}
	query := []string{}
	if *dryRun {
		query = append(query, "dry_run=true")
	}
	if *prune {
		query = append(query, "prune=true")
	}
	path := "/config/v1/apply"
	if len(query) > 0 {
		path += "?" + strings.Join(query, "&")
	}

	if n := countResources(doc); n >= progressThreshold {
		fmt.Fprintf(stderr, "mgmtapi apply: sending %d resources (%d KiB) to %s\n", n, (len(doc)+1023)/1024, c.url)
		done := make(chan struct{})
		defer close(done)
		go func(started time.Time) {
			tick := time.NewTicker(progressEvery)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					fmt.Fprintf(stderr, "mgmtapi apply: waiting for the plan of %d resources (%s)\n", n, time.Since(started).Round(time.Second))
				}
			}
		}(time.Now())
	}
	answer, err := c.do(ctx, http.MethodPost, path, contentType, "application/json", bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	var plan configurationPlan
	if err := json.Unmarshal(answer, &plan); err != nil {
		return fmt.Errorf("apply: the server's plan is not JSON: %w", err)
	}
	printPlan(stdout, plan, *verbose)
	return nil
}

// configurationPlan is the answer of POST /config/v1/apply.
type configurationPlan struct {
	DryRun  bool `json:"dryRun"`
	Changes []struct {
		Area      string `json:"area"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Action    string `json:"action"`
		MatchedBy string `json:"matchedBy"`
		Note      string `json:"note"`
		Fields    []struct {
			Path   string  `json:"path"`
			Before *string `json:"before"`
			After  *string `json:"after"`
		} `json:"fields"`
	} `json:"changes"`
	Summary struct {
		Create, Update, Delete, Unchanged int
	} `json:"summary"`
}

// printPlan writes the plan as a diff, area by area: "+" create, "~" update, "-" delete, and "="
// unchanged when verbose; under an update, each field that changes (~ path "a" → "b", + added,
// - removed), as terraform plan and kubectl diff show them; a resource without an id matched
// with the team's by its name says so. Then one line of totals.
func printPlan(w io.Writer, p configurationPlan, verbose bool) {
	marks := map[string]string{"create": "+", "update": "~", "delete": "-", "unchanged": "="}
	area := ""
	unchangedInArea := 0
	flushArea := func() {
		if area != "" && unchangedInArea > 0 && !verbose {
			fmt.Fprintf(w, "    (%d unchanged)\n", unchangedInArea)
		}
	}
	for _, c := range p.Changes {
		if c.Area != area {
			flushArea()
			area, unchangedInArea = c.Area, 0
			fmt.Fprintf(w, "%s\n", area)
		}
		if c.Action == "unchanged" {
			unchangedInArea++
			if !verbose {
				continue
			}
		}
		label := c.ID
		if c.Name != "" && c.Name != c.ID {
			label = fmt.Sprintf("%q (%s)", c.Name, c.ID)
		}
		if c.ID == "" {
			label = fmt.Sprintf("%q (id assigned by the server)", c.Name)
		}
		if c.MatchedBy == "name" {
			label += ", matched by name"
		}
		if c.Note != "" {
			label += " (" + c.Note + ")"
		}
		mark, ok := marks[c.Action]
		if !ok {
			mark = "?"
		}
		fmt.Fprintf(w, "  %s %s\n", mark, label)
		for _, f := range c.Fields {
			switch {
			case f.Before == nil && f.After != nil:
				fmt.Fprintf(w, "      + %s %s\n", f.Path, *f.After)
			case f.After == nil && f.Before != nil:
				fmt.Fprintf(w, "      - %s %s\n", f.Path, *f.Before)
			case f.Before != nil:
				fmt.Fprintf(w, "      ~ %s %s → %s\n", f.Path, *f.Before, *f.After)
			}
		}
	}
	flushArea()
	verb := "Applied"
	if p.DryRun {
		verb = "Dry run, nothing changed"
	}
	fmt.Fprintf(w, "%s: %d to create, %d to update, %d to delete, %d unchanged.\n",
		verb, p.Summary.Create, p.Summary.Update, p.Summary.Delete, p.Summary.Unchanged)
}

// countResources counts the resources of a document (the items of its top-level lists, and its
// top-level objects), for the progress line; 0 when it is not a YAML or JSON object.
func countResources(doc []byte) int {
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return 0
	}
	n := 0
	top := root.Content[0]
	for i := 1; i < len(top.Content); i += 2 {
		switch v := top.Content[i]; v.Kind {
		case yaml.SequenceNode:
			n += len(v.Content)
		case yaml.MappingNode:
			n++
		}
	}
	return n
}
