package api

import (
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apidocument"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// TestConfigurationSchemaNamesEveryArea: the served document's TeamConfiguration schema names
// every area of the configuration document (a list, or one object for a teamconfig.Single area)
// and nothing else but version, so that a client generated from the document keeps every area
// from an export to an apply.
func TestConfigurationSchemaNamesEveryArea(t *testing.T) {
	doc, err := apidocument.Load()
	if err != nil {
		t.Fatal(err)
	}
	properties, _ := doc.Lookup("#/components/schemas/TeamConfiguration")["properties"].(map[string]any)
	if len(properties) == 0 {
		t.Fatal("TeamConfiguration has no properties")
	}
	want := map[string]string{}
	for _, a := range configurationAreas(Options{}, nil, nil) {
		want[a.Key()] = "#/components/schemas/ConfigurationResources"
		if _, single := a.(teamconfig.Single); single {
			want[a.Key()] = "#/components/schemas/ConfigurationResource"
		}
	}
	for key, ref := range want {
		property, _ := properties[key].(map[string]any)
		if got, _ := property["$ref"].(string); got != ref {
			t.Errorf("TeamConfiguration.%s: $ref %q, want %q", key, got, ref)
		}
	}
	for key := range properties {
		if _, area := want[key]; !area && key != "version" {
			t.Errorf("TeamConfiguration.%s is not an area of the configuration document", key)
		}
	}
}
