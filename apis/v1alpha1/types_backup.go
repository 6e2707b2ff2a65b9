package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BackupSpec turns on backups of a group into an S3-compatible object
// store (docs/backups.md).
// +kubebuilder:validation:XValidation:rule="!has(self.schedules) || self.schedules.all(a, self.schedules.exists_one(b, b.name == a.name))",message="backup schedule names must be unique"
type BackupSpec struct {
	// ObjectStore is where base backups and archived binlogs go.
	ObjectStore ObjectStoreSpec `json:"objectStore"`

	// Schedules each become a CronJob that asks for a backup.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Schedules []BackupSchedule `json:"schedules,omitempty"`

	// RetentionPolicy says which backups are deleted.
	// +kubebuilder:default={}
	// +optional
	RetentionPolicy RetentionPolicy `json:"retentionPolicy"`

	// PITR turns on binlog archiving for point-in-time restore.
	// +kubebuilder:default={}
	// +optional
	PITR PITRSpec `json:"pitr"`
}

// ObjectStoreSpec reaches an S3-compatible bucket.
type ObjectStoreSpec struct {
	// Endpoint is https://host[:port], or http://host:port for a store on
	// a trusted network.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?/?$')",message="backup.objectStore.endpoint must be http(s)://host[:port] with no path"
	Endpoint string `json:"endpoint"`
	// Region defaults to us-east-1.
	// +kubebuilder:default="us-east-1"
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region string `json:"region,omitempty"`
	// Bucket must exist, or the credentials must allow creating it.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9][a-z0-9.-]*[a-z0-9]$')",message="backup.objectStore.bucket must be an S3 bucket name: lowercase letters, digits, dots and hyphens"
	Bucket string `json:"bucket"`
	// Prefix is put before every key, for example "prod/shop".
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.contains('..') && !self.startsWith('/')",message="backup.objectStore.prefix must be a relative key prefix without '..'"
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// PathStyle addresses the bucket in the path, as gateways and
	// MinIO-like stores want.
	// +optional
	PathStyle bool `json:"pathStyle,omitempty"`
	// CredentialsSecret names a Secret in the group's namespace with the
	// keys accessKeyId and secretAccessKey.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	CredentialsSecret string `json:"credentialsSecret"`
	// CASecret, when set, names a Secret whose ca.crt verifies the
	// endpoint's certificate.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	CASecret string `json:"caSecret,omitempty"`
}

// BackupSchedule asks for a backup on a cron schedule.
type BackupSchedule struct {
	// Name is part of the CronJob's name.
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="backup schedule name must be a DNS label of at most 20 characters"
	Name string `json:"name"`
	// Schedule is in cron syntax, for example "0 3 * * *".
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:XValidation:rule="self.matches('^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|\\\\S+( \\\\S+){4})$')",message="backup schedule must be five cron fields such as '0 3 * * *', or @daily, @hourly..."
	Schedule string `json:"schedule"`
	// TimeZone is the IANA zone the schedule is read in.
	// +kubebuilder:default="Etc/UTC"
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

// RetentionPolicy says which backups are deleted.
// +kubebuilder:validation:XValidation:rule="!has(self.maxAge) || self.maxAge.matches('^([0-9]+(h|d))+$')",message="backup.retentionPolicy.maxAge must be hours or days such as 72h or 30d"
type RetentionPolicy struct {
	// KeepLast keeps this many newest successful backups; absent, no limit
	// by count.
	// +kubebuilder:validation:Minimum=1
	// +optional
	KeepLast *int32 `json:"keepLast,omitempty"`
	// MaxAge deletes successful backups older than this (for example 30d).
	// +kubebuilder:validation:MaxLength=16
	// +optional
	MaxAge *string `json:"maxAge,omitempty"`
	// MinKeep successful backups are kept whatever their age.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinKeep int32 `json:"minKeep,omitempty"`
	// MaxFailedKeep failed backups are kept for inspection.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxFailedKeep *int32 `json:"maxFailedKeep,omitempty"`
}

// PITRSpec turns on binlog archiving.
type PITRSpec struct {
	// Enabled archives the writable site's sealed binlogs.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
}

// BackupPhase is where a MysqlBackup is.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type BackupPhase string

// The phases of a MysqlBackup.
const (
	BackupPending   BackupPhase = "Pending"
	BackupRunning   BackupPhase = "Running"
	BackupSucceeded BackupPhase = "Succeeded"
	BackupFailed    BackupPhase = "Failed"
)

// BackupMethod is how a backup's data is taken.
// +kubebuilder:validation:Enum=mariadb-backup
type BackupMethod string

// BackupMethodPhysical streams mariadb-backup (xtrabackup on MySQL).
const BackupMethodPhysical BackupMethod = "mariadb-backup"

// MysqlBackup is one backup of a failover group.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mbk,categories=bloodraven
// +kubebuilder:printcolumn:name="Group",type=string,JSONPath=`.spec.group`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Site",type=string,JSONPath=`.status.site`
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.status.size`
// +kubebuilder:printcolumn:name="GTID",type=string,JSONPath=`.status.gtidSet`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MysqlBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MysqlBackupSpec   `json:"spec"`
	Status MysqlBackupStatus `json:"status,omitempty"`
}

// MysqlBackupSpec names the group to back up.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a MysqlBackup's spec cannot change; create another"
type MysqlBackupSpec struct {
	// Group is the MysqlFailoverGroup in the same namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group"`
	// Site, when set, is the site to take it from; absent, the operator
	// picks a caught-up replica, else the primary.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Site string `json:"site,omitempty"`
	// Method is how the data is taken.
	// +kubebuilder:default="mariadb-backup"
	// +optional
	Method BackupMethod `json:"method,omitempty"`
}

// MysqlBackupStatus is what the operator made of a MysqlBackup.
type MysqlBackupStatus struct {
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`
	// Site is the site the backup was taken from.
	// +optional
	Site string `json:"site,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	StopTime *metav1.Time `json:"stopTime,omitempty"`
	// Size is the stored (compressed) bytes.
	// +optional
	Size int64 `json:"size,omitempty"`
	// GTIDSet is the GTID position the data is consistent with.
	// +optional
	GTIDSet string `json:"gtidSet,omitempty"`
	// +optional
	BinlogFile string `json:"binlogFile,omitempty"`
	// +optional
	BinlogPosition int64 `json:"binlogPosition,omitempty"`
	// Location is the backup's folder in the store: bucket/prefix/key.
	// +optional
	Location string `json:"location,omitempty"`
	// Attempts counts the tries so far; a failed try is retried with
	// backoff until the phase is Failed.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// Message says why it waits or failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// MysqlBackupList is a list of MysqlBackups.
// +kubebuilder:object:root=true
type MysqlBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MysqlBackup `json:"items"`
}
