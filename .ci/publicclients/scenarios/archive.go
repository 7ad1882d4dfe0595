package main

import (
	"flag"
	"strings"

	"mgmtapi-ci/publicclients/metricsdataarchive"
	"mgmtapi-ci/publicclients/target"
)

// archiveBucket is a bucket that exists at the S3 endpoint the server checks buckets at
// (--s3-endpoint); .ci/publicclients/run starts that endpoint (SeaweedFS) and creates it.
var archiveBucket = flag.String("archive-bucket", "", "an existing bucket at the server's S3 endpoint, for the archive scenarios")

func init() {
	// The logs archive target as the vendor's provider writes it (bucket, region, active): an
	// inactive target stored as sent, an active one on the existing bucket (checked for real), and
	// one on a missing bucket refused, changing nothing.
	register("target_service", func(s *S) {
		if *archiveBucket == "" {
			s.failf("flags", "no -archive-bucket: the run script starts the S3 server and names its bucket")
		}
		c, err := target.NewClientWithResponses(s.base, target.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		set := func(step, text string, want int) map[string]any {
			r, err := c.S3TargetServiceSetTargetWithResponse(s.ctx, body[target.S3TargetServiceSetTargetJSONRequestBody](s, step, text))
			out := s.must(step, r, err, want)
			if want == 200 {
				s.typed(step, r.JSON200)
			}
			return out
		}
		out := set("set an inactive target", `{"isActive":false,"s3":{"bucket":"scenario-logs-archive","region":"eu-west-1"}}`, 200)
		s.equal("set an inactive target", out, "target.s3.bucket", "scenario-logs-archive")
		step := "read the target"
		r, err := c.S3TargetServiceGetTargetWithResponse(s.ctx)
		got := s.must(step, r, err, 200)
		s.typed(step, r.JSON200)
		s.equal(step, got, "target.s3.region", "eu-west-1")
		s.equal(step, got, "target.archiveSpec.isActive", "false")

		out = set("activate the target on an existing bucket", `{"isActive":true,"s3":{"bucket":"`+*archiveBucket+`"}}`, 200)
		s.equal("activate the target on an existing bucket", out, "target.archiveSpec.isActive", "true")
		step = "refuse a missing bucket"
		out = set(step, `{"isActive":true,"s3":{"bucket":"scenario-no-such-bucket"}}`, 400)
		if msg := str(out, "message"); !strings.Contains(msg, `"scenario-no-such-bucket"`) || !strings.Contains(msg, "does not exist") {
			s.failf(step, "the message does not say the bucket is missing: %q", msg)
		}
		r2, err := c.S3TargetServiceGetTargetWithResponse(s.ctx)
		got = s.must(step, r2, err, 200)
		s.equal(step, got, "target.s3.bucket", *archiveBucket)
	})

	// The metrics archive: validate a bucket that exists and one that does not (a clear message),
	// configure, read, update, disable, enable (checked), and a second configure refused.
	register("metrics_data_archive_service", func(s *S) {
		if *archiveBucket == "" {
			s.failf("flags", "no -archive-bucket: the run script starts the S3 server and names its bucket")
		}
		c, err := metricsdataarchive.NewClientWithResponses(s.base, metricsdataarchive.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		step := "validate an existing bucket"
		r1, err := c.MetricsConfiguratorPublicServiceValidateBucketWithResponse(s.ctx,
			body[metricsdataarchive.MetricsConfiguratorPublicServiceValidateBucketJSONRequestBody](s, step, `{"s3":{"bucket":"`+*archiveBucket+`","region":"eu-north-1"}}`))
		s.must(step, r1, err, 200)
		step = "validate a missing bucket"
		r2, err := c.MetricsConfiguratorPublicServiceValidateBucketWithResponse(s.ctx,
			body[metricsdataarchive.MetricsConfiguratorPublicServiceValidateBucketJSONRequestBody](s, step, `{"s3":{"bucket":"scenario-no-such-bucket","region":"eu-north-1"}}`))
		out := s.must(step, r2, err, 400)
		if msg := str(out, "message"); !strings.Contains(msg, `"scenario-no-such-bucket"`) || !strings.Contains(msg, "does not exist") {
			s.failf(step, "the message does not say the bucket is missing: %q", msg)
		}

		step = "configure the archive"
		first := `{"s3":{"bucket":"` + *archiveBucket + `","region":"eu-north-1"},"retentionPolicy":{"rawResolution":1,"fiveMinutesResolution":2,"oneHourResolution":3}}`
		r3, err := c.MetricsConfiguratorPublicServiceConfigureTenantWithResponse(s.ctx,
			body[metricsdataarchive.MetricsConfiguratorPublicServiceConfigureTenantJSONRequestBody](s, step, first))
		if s.mustOneOf(step, r3, err, 200, 409) == 409 { // a second segment's run: the first configured it
			step = "update the archive back"
			r, err := c.MetricsConfiguratorPublicServiceUpdateWithResponse(s.ctx,
				body[metricsdataarchive.MetricsConfiguratorPublicServiceUpdateJSONRequestBody](s, step, `{"s3":{"bucket":"`+*archiveBucket+`","region":"eu-north-1"},"retentionDays":1}`))
			s.must(step, r, err, 200)
		}
		step = "read the archive"
		r4, err := c.MetricsConfiguratorPublicServiceGetTenantConfigWithResponse(s.ctx)
		got := s.must(step, r4, err, 200)
		s.typed(step, r4.JSON200)
		s.equal(step, got, "tenantConfig.s3.bucket", *archiveBucket)
		s.equal(step, got, "tenantConfig.retentionPolicy.oneHourResolution", "3")
		s.equal(step, got, "tenantConfig.disabled", "false")

		step = "a second configure is refused"
		r5, err := c.MetricsConfiguratorPublicServiceConfigureTenantWithResponse(s.ctx,
			body[metricsdataarchive.MetricsConfiguratorPublicServiceConfigureTenantJSONRequestBody](s, step, first))
		s.must(step, r5, err, 409)

		step = "update the archive"
		r6, err := c.MetricsConfiguratorPublicServiceUpdateWithResponse(s.ctx,
			body[metricsdataarchive.MetricsConfiguratorPublicServiceUpdateJSONRequestBody](s, step, `{"s3":{"bucket":"scenario-other-bucket","region":"eu-north-1"},"retentionDays":30}`))
		s.must(step, r6, err, 200)
		r7, err := c.MetricsConfiguratorPublicServiceGetTenantConfigWithResponse(s.ctx)
		got = s.must(step, r7, err, 200)
		s.equal(step, got, "tenantConfig.s3.bucket", "scenario-other-bucket")
		s.equal(step, got, "tenantConfig.retentionPolicy.rawResolution", "30")

		step = "disable the archive"
		r8, err := c.MetricsConfiguratorPublicServiceDisableArchiveWithResponse(s.ctx)
		s.must(step, r8, err, 200)
		step = "enabling on a missing bucket is refused"
		r9, err := c.MetricsConfiguratorPublicServiceEnableArchiveWithResponse(s.ctx)
		s.must(step, r9, err, 400)
		r10, err := c.MetricsConfiguratorPublicServiceGetTenantConfigWithResponse(s.ctx)
		got = s.must(step, r10, err, 200)
		s.equal(step, got, "tenantConfig.disabled", "true")

		step = "enable the archive on the existing bucket"
		r11, err := c.MetricsConfiguratorPublicServiceUpdateWithResponse(s.ctx,
			body[metricsdataarchive.MetricsConfiguratorPublicServiceUpdateJSONRequestBody](s, step, `{"s3":{"bucket":"`+*archiveBucket+`","region":"eu-north-1"}}`))
		s.must(step, r11, err, 200)
		r12, err := c.MetricsConfiguratorPublicServiceEnableArchiveWithResponse(s.ctx)
		s.must(step, r12, err, 200)
		r13, err := c.MetricsConfiguratorPublicServiceGetTenantConfigWithResponse(s.ctx)
		got = s.must(step, r13, err, 200)
		s.equal(step, got, "tenantConfig.disabled", "false")
	})
}
