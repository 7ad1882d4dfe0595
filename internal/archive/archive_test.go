package archive_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/archive"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	logsPath    = "/mgmt/openapi/latest/logs/data-setup/v2"
	metricsPath = "/mgmt/openapi/latest/metrics/data-setup/v1"
)

// TestBucketNames: S3's naming rules, each broken once, are refused naming the rule; good
// names pass.
func TestBucketNames(t *testing.T) {
	for name, want := range map[string]string{
		"":                          "required",
		"ab":                        "3 to 63 characters",
		strings.Repeat("a", 64):     "3 to 63 characters",
		"My-Bucket":                 "lowercase letters",
		"-bucket":                   "begin and end",
		"bucket_name":               "lowercase letters",
		"a..b":                      "two dots",
		"a.-b":                      "dot next to a hyphen",
		"192.168.5.4":               "IP address",
		"xn--bucket":                `begin with "xn--"`,
		"sthree-bucket":             `begin with "sthree-"`,
		"bucket-s3alias":            `end with "-s3alias"`,
		"bucket--ol-s3":             `end with "--ol-s3"`,
		"team-logs.archive-2026":    "",
		"coralogix-c4c-eu2-archive": "",
	} {
		err := archive.CheckBucketName("s3.bucket", name)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q refused: %v", name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "s3.bucket: ")):
			t.Errorf("%q: %v, want a message with %q", name, err, want)
		}
	}
	for r, ok := range map[string]bool{"": true, "eu-west-1": true, "us-gov-west-1": true, "eu-north-1": true, "EU-WEST-1": false, "europe": false, "us-east-1a": false} {
		if err := archive.CheckRegion("s3.region", r); (err == nil) != ok {
			t.Errorf("region %q: %v", r, err)
		}
	}
}

// TestFormAndStateWithoutS3: targets are stored and answered as set, inactive ones without a
// check; bad forms and a failing check change nothing; the metrics archive is configured once,
// updated, disabled, and not enabled while its bucket cannot be checked; another team sees none
// of it.
func TestFormAndStateWithoutS3(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, logsPath, env.RootKey, ""), http.StatusNotFound, "no logs archive target")
		res := env.JSON(t, http.MethodPost, logsPath, env.RootKey, `{"isActive":false,"s3":{"bucket":"team-logs","region":"eu-west-1"}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("set inactive: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, logsPath, env.RootKey, `{"isActive":false,"s3":{"bucket":"Bad_Name"}}`), http.StatusBadRequest, "s3.bucket", "lowercase")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, logsPath, env.RootKey, `{"isActive":false,"s3":{"bucket":"team-logs","region":"moon"}}`), http.StatusBadRequest, "s3.region")
		// an active target is checked: nothing listens at the Env's endpoint
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, logsPath, env.RootKey, `{"isActive":true,"s3":{"bucket":"other-logs"}}`), http.StatusBadRequest,
			`s3.bucket: bucket "other-logs" failed the check`, "could not be reached")
		got := env.JSON(t, http.MethodGet, logsPath, env.RootKey, "")
		if apitest.At(apitest.Decode[map[string]any](t, got), "target", "s3", "bucket") != "team-logs" ||
			apitest.At(apitest.Decode[map[string]any](t, got), "target", "archiveSpec", "isActive") != false {
			t.Fatalf("target after refused changes: %s", got.Body)
		}

		apitest.ExpectError(t, env.JSON(t, http.MethodGet, metricsPath, env.RootKey, ""), http.StatusNotFound, "no metrics archive")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metricsPath+"/enable", env.RootKey, ""), http.StatusNotFound, "no metrics archive")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metricsPath, env.RootKey, `{}`), http.StatusBadRequest, "exactly one storage")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metricsPath, env.RootKey, `{"s3":{"bucket":"a"},"gcs":{"bucket":"abc"}}`), http.StatusBadRequest, "(got 2)")
		if res := env.JSON(t, http.MethodPost, metricsPath, env.RootKey, `{"s3":{"bucket":"team-metrics","region":"eu-north-1"},"retentionPolicy":{"rawResolution":1,"fiveMinutesResolution":2,"oneHourResolution":3}}`); res.Status != http.StatusOK {
			t.Fatalf("configure: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metricsPath, env.RootKey, `{"s3":{"bucket":"team-metrics"}}`), http.StatusConflict, "already configured")
		if res := env.JSON(t, http.MethodPut, metricsPath, env.RootKey, `{"s3":{"bucket":"team-metrics-2","region":"eu-north-1"},"retentionDays":30}`); res.Status != http.StatusOK {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodPost, metricsPath+"/disable", env.RootKey, ""); res.Status != http.StatusOK {
			t.Fatalf("disable: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metricsPath+"/enable", env.RootKey, ""), http.StatusBadRequest, `bucket "team-metrics-2" failed the check`)
		cfg := apitest.Decode[map[string]any](t, env.JSON(t, http.MethodGet, metricsPath, env.RootKey, ""))
		if apitest.At(cfg, "tenantConfig", "s3", "bucket") != "team-metrics-2" || apitest.At(cfg, "tenantConfig", "disabled") != true ||
			apitest.At(cfg, "tenantConfig", "retentionPolicy", "rawResolution") != float64(30) ||
			apitest.At(cfg, "tenantConfig", "retentionPolicy", "oneHourResolution") != float64(3) {
			t.Fatalf("metrics archive: %v", cfg)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metricsPath+"/validate", env.RootKey, `{"gcs":{"bucket":"abc"}}`), http.StatusBadRequest, "only S3 buckets")

		// each stored change is audited once, naming its kind; the refused ones are not
		page, err := env.Client(t, apitest.OperatorKey).AdminListAuditRecords(context.Background(), oas.AdminListAuditRecordsParams{TeamID: 1})
		if err != nil {
			t.Fatal(err)
		}
		var audited []string
		for _, r := range page.Records {
			if strings.Contains(r.Operation, "Archive") {
				audited = append(audited, r.Operation+":"+strings.Join(r.ResourceIds, "+"))
			}
		}
		if got := strings.Join(audited, ","); got != "DisableMetricsArchive:metrics,UpdateMetricsArchive:metrics,ConfigureMetricsArchive:metrics,SetLogsArchiveTarget:logs" {
			t.Fatalf("audit records: %s", got)
		}

		_, other := env.MustTeam(t, "other")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, logsPath, other, ""), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, metricsPath, other, ""), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metricsPath+"/disable", other, ""), http.StatusNotFound)
	})
}

// TestBucketsAreCheckedForReal runs SeaweedFS's S3 server on loopback: an existing bucket passes
// the validation, and a target set active and an archive enabled on it are stored; the test
// objects are removed again; a missing bucket fails with a message naming it, and changes nothing.
func TestBucketsAreCheckedForReal(t *testing.T) {
	endpoint := apitest.S3Server(t, "team-archive")
	apitest.EnginesWith(t, apitest.Options{S3Endpoint: endpoint}, func(t *testing.T, env *apitest.Env) {
		if res := env.JSON(t, http.MethodPost, metricsPath+"/validate", env.RootKey, `{"s3":{"bucket":"team-archive","region":"eu-north-1"}}`); res.Status != http.StatusOK || string(res.Body) != "{}" {
			t.Fatalf("validate an existing bucket: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metricsPath+"/validate", env.RootKey, `{"s3":{"bucket":"no-such-bucket"}}`), http.StatusBadRequest,
			`s3.bucket: bucket "no-such-bucket" failed the check at the S3 endpoint `+endpoint+": it does not exist")
		if res := env.JSON(t, http.MethodPost, logsPath, env.RootKey, `{"isActive":true,"s3":{"bucket":"team-archive"}}`); res.Status != http.StatusOK {
			t.Fatalf("set an active target: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, logsPath, env.RootKey, `{"isActive":true,"s3":{"bucket":"no-such-bucket"}}`), http.StatusBadRequest, "it does not exist")
		got := apitest.Decode[map[string]any](t, env.JSON(t, http.MethodGet, logsPath, env.RootKey, ""))
		if apitest.At(got, "target", "s3", "bucket") != "team-archive" || apitest.At(got, "target", "archiveSpec", "isActive") != true {
			t.Fatalf("target: %v", got)
		}
		if res := env.JSON(t, http.MethodPost, metricsPath, env.RootKey, `{"s3":{"bucket":"no-such-bucket"}}`); res.Status != http.StatusOK {
			t.Fatalf("configure: %d %s", res.Status, res.Body)
		}
		env.JSON(t, http.MethodPost, metricsPath+"/disable", env.RootKey, "")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metricsPath+"/enable", env.RootKey, ""), http.StatusBadRequest, `"no-such-bucket"`, "it does not exist")
		env.JSON(t, http.MethodPut, metricsPath, env.RootKey, `{"s3":{"bucket":"team-archive"}}`)
		if res := env.JSON(t, http.MethodPost, metricsPath+"/enable", env.RootKey, ""); res.Status != http.StatusOK {
			t.Fatalf("enable: %d %s", res.Status, res.Body)
		}
		if d := apitest.At(apitest.Decode[map[string]any](t, env.JSON(t, http.MethodGet, metricsPath, env.RootKey, "")), "tenantConfig", "disabled"); d != false {
			t.Fatalf("disabled after enable: %v", d)
		}
	})
	list, err := apitest.S3Client(endpoint).ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String("team-archive")})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Contents {
		t.Errorf("a test object was left in the bucket: %s", aws.ToString(o.Key))
	}
}
