package integrations

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltInCatalogLoads(t *testing.T) {
	c, err := LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 11 {
		t.Fatalf("%d built-in definitions, want 11", c.Len())
	}
	for _, key := range []string{"aws-metrics-collector", "aws-resource-catalog", "aws-sqs", "gcp-metrics", "azure-eventhub", "kubernetes-collector", "generic-webhook", "rum-browser"} {
		if _, ok := c.lookup(integrationsService, key); !ok {
			t.Errorf("no integration %s", key)
		}
	}
	for _, key := range []string{"github-contextual-data", "pagerduty-contextual-data", "statuspage-contextual-data"} {
		if _, ok := c.lookup(contextualDataService, key); !ok {
			t.Errorf("no contextual data integration %s", key)
		}
		if _, ok := c.lookup(integrationsService, key); ok {
			t.Errorf("%s is served by the integration service too", key)
		}
	}
}

// valid is a definition that loads; the cases below break one rule of it each.
const valid = `{"key":"acme-logs","name":"Acme logs","type":"untracked","revisions":[{"version":"1.0.0","fields":[
	{"name":"Region","type":"SELECT","required":true,"options":["eu","us"],"default":"eu"},
	{"name":"Url","type":"TEXT","allowedPattern":"https://.+"}],"testEndpoint":"Url"}]}`

func TestCatalogDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "acme.json"), []byte(valid), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := c.lookup(integrationsService, "acme-logs")
	if !ok || c.Len() != 12 {
		t.Fatalf("the directory's definition is not in the catalog (%d definitions)", c.Len())
	}
	f, _ := d.Revisions[0].field("Region")
	if f.value == nil || f.value.String != "eu" {
		t.Fatalf("default not decoded: %+v", f.value)
	}
	if _, err := LoadCatalog(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "integrations-dir") {
		t.Fatalf("a missing directory: %v", err)
	}
}

func TestCatalogErrors(t *testing.T) {
	cases := []struct {
		name, old, new string
		fragments      []string
	}{
		{"bad JSON", `{"key"`, `{"key":,`, []string{"invalid JSON"}},
		{"unknown field", `"name":"Acme logs"`, `"name":"Acme logs","colour":"red"`, []string{"unknown field", "colour"}},
		{"wrong JSON type", `"required":true`, `"required":"yes"`, []string{"required", "must be a boolean"}},
		{"key", `"acme-logs"`, `"Acme Logs"`, []string{"key:", "lowercase"}},
		{"type", `"untracked"`, `"ftp"`, []string{"type:", `"ftp"`}},
		{"variant without managed", `"type":"untracked"`, `"type":"untracked","managedVariant":"GCP"`, []string{"managedVariant"}},
		{"duplicate version", `}],"testEndpoint":"Url"}]}`, `}],"testEndpoint":"Url"},{"version":"1.0.0"}]}`, []string{"revisions[1].version", "also revisions[0]"}},
		{"template without deployment", `"version":"1.0.0"`, `"version":"1.0.0","templateUrl":"https://x.example/t"`, []string{"revisions[0].templateUrl"}},
		{"cloudFormation without template", `"version":"1.0.0"`, `"version":"1.0.0","deployment":"cloudFormation"`, []string{"revisions[0].templateUrl", "required"}},
		{"field type", `"type":"TEXT"`, `"type":"DATE"`, []string{"revisions[0].fields[1].type", `"DATE"`}},
		{"selection without options", `"options":["eu","us"],`, ``, []string{"revisions[0].fields[0].options", "needs its options"}},
		{"options on text", `"allowedPattern":"https://.+"`, `"options":["a"]`, []string{"revisions[0].fields[1].options", "takes no options"}},
		{"default not an option", `"default":"eu"`, `"default":"asia"`, []string{"revisions[0].fields[0].default", "not one of the options"}},
		{"default of the wrong kind", `"default":"eu"`, `"default":3`, []string{"revisions[0].fields[0].default", "must be a string"}},
		{"bad pattern", `"https://.+"`, `"(("`, []string{"revisions[0].fields[1].allowedPattern", "regular expression"}},
		{"duplicate field", `"name":"Url"`, `"name":"Region"`, []string{"revisions[0].fields[1].name", "also fields[0]"}},
		{"test endpoint not a text field", `"testEndpoint":"Url"`, `"testEndpoint":"Region"`, []string{"revisions[0].testEndpoint"}},
		{"built-in key", `"acme-logs"`, `"aws-sqs"`, []string{"key:", "already defined by built-in aws-sqs.json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(valid, c.old, c.new, 1)
			if doc == valid {
				t.Fatalf("the case changes nothing")
			}
			dir := t.TempDir()
			p := filepath.Join(dir, "acme.json")
			if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadCatalog(dir)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, f := range append([]string{"integrations-dir " + p + ": "}, c.fragments...) {
				if !strings.Contains(err.Error(), f) {
					t.Fatalf("error %q does not contain %q", err, f)
				}
			}
		})
	}
}
