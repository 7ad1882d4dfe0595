// Package api holds mgmtapi's contract: the OpenAPI document that the server is generated from
// and that it serves at /openapi.yaml and /openapi.json.
package api

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/go-faster/yaml"
)

// OpenAPIYAML is the document as written.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// Documents returns the document as YAML and as JSON with its servers list replaced by the
// deployment's own address, described by its region.
func Documents(serverURL, region string) (yamlDoc, jsonDoc []byte, err error) {
	var root yaml.Node
	if err := yaml.Unmarshal(OpenAPIYAML, &root); err != nil {
		return nil, nil, fmt.Errorf("openapi document: %w", err)
	}
	doc := root.Content[0]
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "servers" {
			continue
		}
		var servers yaml.Node
		if err := servers.Encode([]map[string]string{{
			"url":         serverURL,
			"description": "region " + region,
		}}); err != nil {
			return nil, nil, err
		}
		doc.Content[i+1] = &servers
	}
	yamlDoc, err = yaml.Marshal(&root)
	if err != nil {
		return nil, nil, err
	}
	var generic any
	if err := root.Decode(&generic); err != nil {
		return nil, nil, err
	}
	jsonDoc, err = json.Marshal(generic)
	if err != nil {
		return nil, nil, fmt.Errorf("openapi document as JSON: %w", err)
	}
	return yamlDoc, jsonDoc, nil
}
