package archive

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// singleID is the id of a team's one logs archive target and one metrics archive in the
// configuration document.
const singleID = "default"

// LogsConfiguration is the logs archive target's part of a team's configuration document
// (teamconfig.Area, teamconfig.Single): the target as SetLogsArchiveTarget's body ({isActive,
// format, s3}), checked by logsTarget as that operation does, its bucket checked for real through
// S3 when it is active (before the apply's transaction, as Prepare runs).
type LogsConfiguration struct{ S3 S3 }

// Key implements teamconfig.Area.
func (LogsConfiguration) Key() string { return "logsArchiveTarget" }

// Single implements teamconfig.Single.
func (LogsConfiguration) Single() {}

// Permissions implements teamconfig.Area.
func (LogsConfiguration) Permissions() (read, write string) {
	return "logs.data-setup#low:ReadConfig", "logs.data-setup#low:UpdateConfig"
}

// inputOf is the stored target as the set operation's body.
func inputOf(t oas.LogsArchiveTarget) oas.LogsArchiveTargetInput {
	return oas.LogsArchiveTargetInput{IsActive: t.ArchiveSpec.IsActive.Or(false), Format: t.ArchiveSpec.Format, S3: t.S3.Value}
}

// Export implements teamconfig.Area.
func (LogsConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var t oas.LogsArchiveTarget
	err := getSetting(ctx, q, teamID, logsKind, &t)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	in := inputOf(t)
	doc, err := in.MarshalJSON()
	return []teamconfig.Resource{{ID: singleID, Doc: doc}}, err
}

// Prepare implements teamconfig.Area.
func (c LogsConfiguration) Prepare(ctx context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var in oas.LogsArchiveTargetInput
	if err := teamconfig.DecodeBody(oas.SetLogsArchiveTargetOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	t, err := logsTarget(ctx, c.S3, in)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	stored := inputOf(t)
	encoded, err := stored.MarshalJSON()
	return teamconfig.Resource{ID: singleID, Doc: encoded, Value: t}, err
}

// Put implements teamconfig.Area.
func (LogsConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	t := r.Value.(oas.LogsArchiveTarget)
	return putSetting(ctx, tx, teamID, logsKind, t.ArchiveSpec.IsActive.Or(false), &t)
}

// Delete implements teamconfig.Area.
func (LogsConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, _ string) error {
	return deleteSetting(ctx, tx, teamID, logsKind)
}

// MetricsConfiguration is the metrics archive's part of a team's configuration document
// (teamconfig.Area, teamConfig.Single): the configuration as GetMetricsArchive answers it without
// tenantId and prefix (set by the server), its storage checked by storage.check as the configure
// operation does, and its S3 bucket checked for real through S3 when it is enabled, as the enable
// operation does.
type MetricsConfiguration struct{ S3 S3 }

// Key implements teamconfig.Area.
func (MetricsConfiguration) Key() string { return "metricsArchive" }

// Single implements teamconfig.Single.
func (MetricsConfiguration) Single() {}

// Permissions implements teamconfig.Area.
func (MetricsConfiguration) Permissions() (read, write string) {
	return "metrics.data-setup#low:ReadConfig", "metrics.data-setup#low:UpdateConfig"
}

// Export implements teamconfig.Area.
func (MetricsConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var c oas.MetricsArchiveConfig
	err := getSetting(ctx, q, teamID, metricsKind, &c)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.TenantId, c.Prefix = oas.OptInt64{}, oas.OptString{}
	doc, err := c.MarshalJSON()
	return []teamconfig.Resource{{ID: singleID, Doc: doc}}, err
}

// Prepare implements teamconfig.Area.
func (m MetricsConfiguration) Prepare(ctx context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var c oas.MetricsArchiveConfig
	if err := teamconfig.DecodeBody(oas.ConfigureMetricsArchiveOperation, doc, &c); err != nil {
		return teamconfig.Resource{}, err
	}
	if err := storageOf(c).check(); err != nil {
		return teamconfig.Resource{}, err
	}
	if !c.Disabled.Or(false) {
		if err := checkBucket(ctx, m.S3, storageOf(c)); err != nil {
			return teamconfig.Resource{}, err
		}
	}
	c.TenantId, c.Prefix = oas.OptInt64{}, oas.OptString{}
	c.Disabled = oas.NewOptBool(c.Disabled.Or(false))
	encoded, err := c.MarshalJSON()
	return teamconfig.Resource{ID: singleID, Doc: encoded, Value: c}, err
}

// Put implements teamconfig.Area.
func (MetricsConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	c := r.Value.(oas.MetricsArchiveConfig)
	c.TenantId, c.Prefix = oas.NewOptInt64(teamID), oas.NewOptString(prefix(teamID, metricsKind))
	return putSetting(ctx, tx, teamID, metricsKind, !c.Disabled.Or(false), &c)
}

// Delete implements teamconfig.Area.
func (MetricsConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, _ string) error {
	return deleteSetting(ctx, tx, teamID, metricsKind)
}
