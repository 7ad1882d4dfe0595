// Package archive serves a team's archive storage: the logs archive target (the public target
// service) and the metrics archive (the public metrics data archive service). Bucket settings are
// checked in form (S3's bucket naming rules, the region's form); making a target active, enabling
// the metrics archive and the validation check the S3 bucket for real (S3.Check): it exists and
// takes a test object, written and removed. Those checks run before the transaction that stores
// the outcome, never inside it.
package archive

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// ArchiveHandler implements the logs archive target and metrics archive operations of
// oas.Handler.
type ArchiveHandler struct {
	db *db.DB
	s3 S3
}

// NewHandler returns the archive operations over database, checking buckets through s3.
func NewHandler(database *db.DB, s3 S3) *ArchiveHandler { return &ArchiveHandler{db: database, s3: s3} }

// prefix is where a team's archived objects of kind go in its bucket, and its test objects.
func prefix(teamID int64, kind string) string { return fmt.Sprintf("mgmtapi/team-%d/%s", teamID, kind) }

// GetLogsArchiveTarget answers the team's logs archive target.
//
// Errors: NotFound before one is set.
func (h *ArchiveHandler) GetLogsArchiveTarget(ctx context.Context) (*oas.LogsArchiveTargetEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	var t oas.LogsArchiveTarget
	err := getSetting(ctx, h.db.Read(), caller.TeamID, logsKind, &t)
	if errors.Is(err, db.ErrNotFound) {
		return nil, apierror.NotFoundf("target: this team has no logs archive target; set one first")
	}
	if err != nil {
		return nil, err
	}
	return &oas.LogsArchiveTargetEnvelope{Target: t}, nil
}

// SetLogsArchiveTarget stores the team's logs archive target, over the one it had. An active
// target's bucket is checked for real first.
//
// Errors: Invalid naming the field (see logsTarget) or saying why the bucket failed its check.
func (h *ArchiveHandler) SetLogsArchiveTarget(ctx context.Context, req *oas.LogsArchiveTargetInput) (*oas.LogsArchiveTargetEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	t, err := logsTarget(ctx, h.s3, *req)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		tx.AuditResource(logsKind)
		return putSetting(ctx, tx, caller.TeamID, logsKind, t.ArchiveSpec.IsActive.Or(false), &t)
	})
	if err != nil {
		return nil, err
	}
	return &oas.LogsArchiveTargetEnvelope{Target: t}, nil
}

// logsTarget checks in in form, and its bucket for real through c when it is active, and returns
// it as stored.
//
// Errors: Invalid naming s3.bucket or s3.region and the rule, or why the bucket failed its check.
func logsTarget(ctx context.Context, c S3, in oas.LogsArchiveTargetInput) (oas.LogsArchiveTarget, error) {
	if err := CheckBucketName("s3.bucket", in.S3.Bucket); err != nil {
		return oas.LogsArchiveTarget{}, err
	}
	if err := CheckRegion("s3.region", in.S3.Region.Or("")); err != nil {
		return oas.LogsArchiveTarget{}, err
	}
	if in.IsActive {
		if err := c.Check(ctx, "s3.bucket", in.S3.Bucket, in.S3.Region.Or("")); err != nil {
			return oas.LogsArchiveTarget{}, err
		}
	}
	return oas.LogsArchiveTarget{
		ArchiveSpec: oas.LogsArchiveSpec{
			IsActive: oas.NewOptBool(in.IsActive), Format: oas.NewOptArchiveFormat(in.Format.Or(oas.ArchiveFormatTARGETFORMATUNSPECIFIED)),
			EnableTags: oas.NewOptBool(false),
		},
		S3: oas.NewOptLogsArchiveS3(in.S3),
	}, nil
}

// storage is the metrics archive's storage as a request gives it: exactly one of the three.
type storage struct {
	S3  oas.OptMetricsArchiveS3
	Ibm oas.OptMetricsArchiveIbm
	Gcs oas.OptMetricsArchiveGcs
}

// check checks the storage in form.
//
// Errors: Invalid when none or more than one of s3, ibm and gcs is given, or naming the field
// and the rule broken: the S3 bucket's name or region, the IBM crn and endpoint, the GCS bucket.
func (s storage) check() error {
	n := 0
	for _, set := range []bool{s.S3.Set, s.Ibm.Set, s.Gcs.Set} {
		if set {
			n++
		}
	}
	if n != 1 {
		return apierror.Invalidf("s3, ibm, gcs: exactly one storage is required (got %d)", n)
	}
	switch {
	case s.S3.Set:
		if err := CheckBucketName("s3.bucket", s.S3.Value.Bucket.Or("")); err != nil {
			return err
		}
		return CheckRegion("s3.region", s.S3.Value.Region.Or(""))
	case s.Ibm.Set:
		if crn := s.Ibm.Value.Crn.Or(""); !strings.HasPrefix(crn, "crn:") {
			return apierror.Invalidf("ibm.crn: required, a bucket CRN beginning with \"crn:\"")
		}
		if strings.TrimSpace(s.Ibm.Value.Endpoint.Or("")) == "" {
			return apierror.Invalidf("ibm.endpoint: required, the bucket's endpoint host")
		}
		return nil
	default:
		b := s.Gcs.Value.Bucket.Or("")
		if len(b) < 3 || len(b) > 63 || !gcsBucket.MatchString(b) {
			return apierror.Invalidf("gcs.bucket: %q must have 3 to 63 lowercase letters, digits, dots, hyphens or underscores, beginning and ending with a letter or digit", apierror.Excerpt(b))
		}
		return nil
	}
}

// checkBucket checks the storage's S3 bucket for real through c; other storage cannot be.
//
// Errors: Invalid for storage other than S3, or saying why the bucket failed its check.
func checkBucket(ctx context.Context, c S3, s storage) error {
	if !s.S3.Set {
		return apierror.Invalidf("s3: only S3 buckets can be checked by this deployment; IBM and GCS storage is stored as given")
	}
	return c.Check(ctx, "s3.bucket", s.S3.Value.Bucket.Or(""), s.S3.Value.Region.Or(""))
}

func storageOf(c oas.MetricsArchiveConfig) storage { return storage{S3: c.S3, Ibm: c.Ibm, Gcs: c.Gcs} }

// notConfigured is the answer for a metrics archive the team has not configured.
func notConfigured() error {
	return apierror.NotFoundf("tenantConfig: this team has no metrics archive; configure one first")
}

// GetMetricsArchive answers the team's metrics archive configuration.
//
// Errors: NotFound before it is configured.
func (h *ArchiveHandler) GetMetricsArchive(ctx context.Context) (*oas.MetricsArchiveEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	var c oas.MetricsArchiveConfig
	err := getSetting(ctx, h.db.Read(), caller.TeamID, metricsKind, &c)
	if errors.Is(err, db.ErrNotFound) {
		return nil, notConfigured()
	}
	if err != nil {
		return nil, err
	}
	return &oas.MetricsArchiveEnvelope{TenantConfig: oas.NewOptMetricsArchiveConfig(c)}, nil
}

// metricsConfig is the stored form of a new metrics archive of the team.
func metricsConfig(teamID int64, s storage, retention oas.OptMetricsArchiveRetention) oas.MetricsArchiveConfig {
	return oas.MetricsArchiveConfig{
		TenantId: oas.NewOptInt64(teamID), Disabled: oas.NewOptBool(false), Prefix: oas.NewOptString(prefix(teamID, metricsKind)),
		S3: s.S3, Ibm: s.Ibm, Gcs: s.Gcs, RetentionPolicy: retention,
	}
}

// ConfigureMetricsArchive stores the team's first metrics archive configuration, enabled.
//
// Errors: Invalid (see storage.check); Conflict when the team already has one.
func (h *ArchiveHandler) ConfigureMetricsArchive(ctx context.Context, req *oas.MetricsArchiveConfigureInput) error {
	caller := auth.PrincipalFrom(ctx)
	s := storage{S3: req.S3, Ibm: req.Ibm, Gcs: req.Gcs}
	if err := s.check(); err != nil {
		return err
	}
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		var old oas.MetricsArchiveConfig
		err := getSetting(ctx, tx, caller.TeamID, metricsKind, &old)
		if err == nil {
			return apierror.Conflictf("tenantConfig: this team's metrics archive is already configured; update it instead")
		}
		if !errors.Is(err, db.ErrNotFound) {
			return err
		}
		c := metricsConfig(caller.TeamID, s, req.RetentionPolicy)
		tx.AuditResource(metricsKind)
		return putSetting(ctx, tx, caller.TeamID, metricsKind, true, &c)
	})
}

// UpdateMetricsArchive replaces the storage and, when retentionDays is sent, the raw retention;
// the rest is kept.
//
// Errors: Invalid (see storage.check); NotFound before it is configured.
func (h *ArchiveHandler) UpdateMetricsArchive(ctx context.Context, req *oas.MetricsArchiveUpdateInput) error {
	caller := auth.PrincipalFrom(ctx)
	s := storage{S3: req.S3, Ibm: req.Ibm, Gcs: req.Gcs}
	if err := s.check(); err != nil {
		return err
	}
	return h.changeMetrics(ctx, caller.TeamID, func(c *oas.MetricsArchiveConfig) error {
		c.S3, c.Ibm, c.Gcs = s.S3, s.Ibm, s.Gcs
		if days, ok := req.RetentionDays.Get(); ok {
			r := c.RetentionPolicy.Or(oas.MetricsArchiveRetention{})
			r.RawResolution = oas.NewOptInt64(days)
			c.RetentionPolicy = oas.NewOptMetricsArchiveRetention(r)
		}
		return nil
	})
}

// changeMetrics applies change to the team's stored metrics archive in one transaction.
//
// Errors: NotFound before it is configured; change's.
func (h *ArchiveHandler) changeMetrics(ctx context.Context, teamID int64, change func(*oas.MetricsArchiveConfig) error) error {
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		var c oas.MetricsArchiveConfig
		err := getSetting(ctx, tx, teamID, metricsKind, &c)
		if errors.Is(err, db.ErrNotFound) {
			return notConfigured()
		}
		if err != nil {
			return err
		}
		if err := change(&c); err != nil {
			return err
		}
		tx.AuditResource(metricsKind)
		return putSetting(ctx, tx, teamID, metricsKind, !c.Disabled.Or(false), &c)
	})
}

// DisableMetricsArchive stops archiving to the stored storage, which is kept.
//
// Errors: NotFound before it is configured.
func (h *ArchiveHandler) DisableMetricsArchive(ctx context.Context) error {
	caller := auth.PrincipalFrom(ctx)
	return h.changeMetrics(ctx, caller.TeamID, func(c *oas.MetricsArchiveConfig) error {
		c.Disabled = oas.NewOptBool(true)
		return nil
	})
}

// EnableMetricsArchive checks the stored S3 bucket for real and enables archiving to it.
//
// Errors: NotFound before it is configured; Invalid for storage other than S3 or a bucket that
// fails its check; Conflict when the storage changed while it was checked.
func (h *ArchiveHandler) EnableMetricsArchive(ctx context.Context) error {
	caller := auth.PrincipalFrom(ctx)
	var c oas.MetricsArchiveConfig
	err := getSetting(ctx, h.db.Read(), caller.TeamID, metricsKind, &c)
	if errors.Is(err, db.ErrNotFound) {
		return notConfigured()
	}
	if err != nil {
		return err
	}
	checked := storageOf(c)
	if err := checkBucket(ctx, h.s3, checked); err != nil {
		return err
	}
	return h.changeMetrics(ctx, caller.TeamID, func(now *oas.MetricsArchiveConfig) error {
		if storageOf(*now) != checked {
			return apierror.Conflictf("s3: the metrics archive's storage changed while its bucket was checked; enable it again")
		}
		now.Disabled = oas.NewOptBool(false)
		return nil
	})
}

// ValidateMetricsArchiveBucket checks the storage sent in form and its S3 bucket for real.
//
// Errors: Invalid (see storage.check and checkBucket).
func (h *ArchiveHandler) ValidateMetricsArchiveBucket(ctx context.Context, req *oas.MetricsArchiveValidateInput) error {
	s := storage{S3: req.S3, Ibm: req.Ibm, Gcs: req.Gcs}
	if err := s.check(); err != nil {
		return err
	}
	return checkBucket(ctx, h.s3, s)
}
