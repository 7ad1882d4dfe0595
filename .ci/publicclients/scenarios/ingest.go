package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"
)

// ingest opens a case and an incident the only way there is: one Alertmanager webhook (payload
// version 4) to POST /ingest/alertmanager/v1, a raw request outside any public document. It
// returns the case's id.
func (s *S) ingest(alertname, service string) string {
	return s.ingestAlert(alertname, map[string]string{"service": service})
}

// ingestAlert is ingest with the alert's labels besides alertname and severity (critical): an
// alert_def_id label names the alert definition whose firing the alert event feed records. The
// key needs contextual-data:SendData (the bootstrap key has every permission).
func (s *S) ingestAlert(alertname string, extra map[string]string) string {
	const step = "ingest an Alertmanager alert (raw HTTP)"
	s.steps = append(s.steps, "ingest")
	start := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	labels := map[string]string{"alertname": alertname, "severity": "critical"}
	for k, v := range extra {
		labels[k] = v
	}
	service := labels["service"]
	payload := map[string]any{
		"version": "4", "groupKey": "publicclients/" + alertname, "truncatedAlerts": 0, "status": "firing",
		"receiver": "publicclients", "externalURL": "http://alertmanager.invalid:9093",
		"groupLabels":       map[string]string{"alertname": alertname},
		"commonLabels":      map[string]string{"alertname": alertname},
		"commonAnnotations": map[string]string{},
		"alerts": []map[string]any{{
			"status":      "firing",
			"labels":      labels,
			"annotations": map[string]string{"summary": alertname + " on " + service},
			"startsAt":    start, "endsAt": "0001-01-01T00:00:00Z",
			"fingerprint": fmt.Sprintf("%x", sha256.Sum256([]byte(alertname+"/"+service)))[:32],
		}},
	}
	text, _ := json.Marshal(payload)
	out := s.post(step, "/ingest/alertmanager/v1", "application/json", text)
	var answer map[string]any
	_ = json.Unmarshal(out, &answer)
	id := str(answer, "caseId")
	if id == "" {
		s.failf(step, "no caseId: %s", clip(out))
	}
	return id
}
