{{/*
Names. Every object is named after the release (resource-distributor by default), so that the
default values render exactly what webhook-config/ installs. nameOverride replaces
"resource-distributor" in the names and in the label app.kubernetes.io/name (the pods' selector).
*/}}
{{- define "resource-distributor.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "resource-distributor.fullname" -}}
{{- $name := include "resource-distributor.name" . -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount the pods run as, and the RBAC bindings name. */}}
{{- define "resource-distributor.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "resource-distributor.fullname" .) -}}
{{- else if .Values.serviceAccount.name -}}
{{- .Values.serviceAccount.name -}}
{{- else -}}
{{- fail "serviceAccount.name: needed with serviceAccount.create=false (the existing ServiceAccount the pods run as; the chart binds its roles to it)" -}}
{{- end -}}
{{- end -}}

{{- define "resource-distributor.webhookNames" -}}
{{- $name := include "resource-distributor.fullname" . -}}
{{- printf "%s-distributions,%s-namespaces,%s-pods" $name $name $name -}}
{{- end -}}

{{/* The pods' labels, and the selector of the Deployment, Service, PDB and NetworkPolicy. */}}
{{- define "resource-distributor.selectorLabels" -}}
app.kubernetes.io/name: {{ include "resource-distributor.name" . }}
{{- end -}}

{{/* Every object's labels: the selector label and Helm's bookkeeping. */}}
{{- define "resource-distributor.labels" -}}
{{ include "resource-distributor.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Namespaces the namespace and pod webhooks never see: ours (it can always be repaired) and the system ones. */}}
{{- define "resource-distributor.excludedNamespaces" -}}
- key: kubernetes.io/metadata.name
  operator: NotIn
  values: [{{ .Release.Namespace }}, kube-system, kube-public]
{{- end -}}

{{/* RD_ALLOWED_KINDS from .Values.allowedKinds (empty: not set, the server's default). */}}
{{- define "resource-distributor.allowedKinds" -}}
{{- $kinds := list "Secret" "ConfigMap" -}}
{{- range .Values.allowedKinds -}}
{{- if not (and .kind .resource) -}}
{{- fail (printf "allowedKinds: every entry needs kind and resource (and group, unless core): %v" .) -}}
{{- end -}}
{{- $kinds = append $kinds (ternary .kind (printf "%s.%s" .kind .group) (empty .group)) -}}
{{- end -}}
{{- join "," $kinds -}}
{{- end -}}

{{/*
Checks of values that values.schema.json cannot express: the settings the chart derives itself
(refused in .Values.settings), extraEnv, and the client CA the client names need.
*/}}
{{- define "resource-distributor.checkValues" -}}
{{- $derived := list "RD_MODE" "RD_PORT" "RD_NAMESPACE" "RD_SERVICE_NAME" "RD_TLS_SECRET" "RD_WEBHOOK_NAMES" "RD_LEADER_ELECTION" "RD_LEASE_NAME" "RD_LOG_LEVEL" "RD_SHUTDOWN_DELAY" "RD_SHUTDOWN_TIMEOUT" "RD_ALLOWED_KINDS" "RD_WEBHOOK_CLIENT_CA_FILE" "RD_WEBHOOK_CLIENT_NAMES" -}}
{{- if and .Values.apiServerAuthentication.clientNames (not .Values.apiServerAuthentication.clientCAConfigMap) -}}
{{- fail "apiServerAuthentication.clientNames: needs apiServerAuthentication.clientCAConfigMap (the CA that signs those certificates)" -}}
{{- end -}}
{{- range $name, $value := .Values.settings -}}
{{- if not (hasPrefix "RD_" $name) -}}
{{- fail (printf "settings.%s: only RD_* settings (see the README's Configuration table); other environment variables go in extraEnv" $name) -}}
{{- end -}}
{{- if has $name $derived -}}
{{- fail (printf "settings.%s: set by the chart from its own values (logLevel, allowedKinds, ...)" $name) -}}
{{- end -}}
{{- end -}}
{{- range .Values.extraEnv -}}
{{- if hasPrefix "RD_" .name -}}
{{- fail (printf "extraEnv: %s is a setting: put it in settings (which refuses the ones the chart derives)" .name) -}}
{{- end -}}
{{- if eq .name "POD_NAME" -}}
{{- fail "extraEnv: POD_NAME is set by the chart (the pod's name, the Lease holder's identity)" -}}
{{- end -}}
{{- end -}}
{{- end -}}
