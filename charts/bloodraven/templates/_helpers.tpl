{{- define "bloodraven.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "bloodraven.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "bloodraven.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "bloodraven.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "bloodraven.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Rules the operator needs in every namespace it watches. */}}
{{- define "bloodraven.namespacedRules" -}}
- apiGroups: ["bloodraven.shipstream.io"]
  resources: ["mysqlfailovergroups"]
  verbs: ["get", "list", "watch", "update", "patch"]
- apiGroups: ["bloodraven.shipstream.io"]
  resources: ["mysqlfailovergroups/status"]
  verbs: ["get", "update", "patch"]
# MysqlBackups: asked for by people and CronJobs, run and pruned by the operator.
- apiGroups: ["bloodraven.shipstream.io"]
  resources: ["mysqlbackups"]
  verbs: ["get", "list", "watch", "create", "delete"]
- apiGroups: ["bloodraven.shipstream.io"]
  resources: ["mysqlbackups/status"]
  verbs: ["get", "update", "patch"]
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch", "create", "update", "patch"]
# configmaps include bloodraven-view-keys, the public view keys the operator
# writes (create, then update on a rotation) into every group's namespace.
- apiGroups: [""]
  resources: ["services", "configmaps", "persistentvolumeclaims"]
  verbs: ["get", "list", "watch", "create", "update", "patch"]
# Credentials Secrets are created once and never overwritten; the init-SQL
# Secret is kept in step with them by server-side apply, which needs patch.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "patch"]
# Per-group NetworkPolicies (--network-policy).
- apiGroups: ["networking.k8s.io"]
  resources: ["networkpolicies"]
  verbs: ["get", "list", "watch", "create", "update", "patch"]
- apiGroups: ["externaldns.k8s.io"]
  resources: ["dnsendpoints"]
  verbs: ["get", "list", "watch", "create", "update", "patch"]
- apiGroups: ["", "events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end -}}
