{{/*
Names. Every object is named after the release (resource-distributor by default), so that the
default values render exactly what webhook-config/ installs.
*/}}
{{- define "resource-distributor.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains "resource-distributor" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-resource-distributor" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "resource-distributor.webhookNames" -}}
{{- $name := include "resource-distributor.fullname" . -}}
{{- printf "%s-distributions,%s-namespaces,%s-pods" $name $name $name -}}
{{- end -}}

{{/* The pods' labels, and the selector of the Deployment, Service, PDB and NetworkPolicy. */}}
{{- define "resource-distributor.selectorLabels" -}}
app.kubernetes.io/name: resource-distributor
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

{{/* The settings the chart derives itself, refused in .Values.settings. */}}
{{- define "resource-distributor.checkSettings" -}}
{{- $derived := list "RD_MODE" "RD_PORT" "RD_NAMESPACE" "RD_SERVICE_NAME" "RD_TLS_SECRET" "RD_WEBHOOK_NAMES" "RD_LEADER_ELECTION" "RD_LEASE_NAME" "RD_LOG_LEVEL" "RD_SHUTDOWN_DELAY" "RD_SHUTDOWN_TIMEOUT" "RD_ALLOWED_KINDS" "RD_WEBHOOK_CLIENT_CA_FILE" "RD_WEBHOOK_CLIENT_NAMES" -}}
{{- if and .Values.apiServerAuthentication.clientNames (not .Values.apiServerAuthentication.clientCAConfigMap) -}}
{{- fail "apiServerAuthentication.clientNames: needs apiServerAuthentication.clientCAConfigMap (the CA that signs those certificates)" -}}
{{- end -}}
{{- range $name, $value := .Values.settings -}}
{{- if not (hasPrefix "RD_" $name) -}}
{{- fail (printf "settings.%s: only RD_* settings (see the README's Configuration table)" $name) -}}
{{- end -}}
{{- if has $name $derived -}}
{{- fail (printf "settings.%s: set by the chart from its own values (logLevel, allowedKinds, ...)" $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
