{{/* Chart name (app.kubernetes.io/name). */}}
{{- define "spreadwatch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<name>, or <release> when it already contains the name; 63 characters at most. */}}
{{- define "spreadwatch.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* helm.sh/chart: name-version. */}}
{{- define "spreadwatch.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels (immutable in the Deployment: keep them minimal). */}}
{{- define "spreadwatch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "spreadwatch.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Standard labels of every object, then commonLabels (the schema keeps them off the standard keys); the caller
     adds app.kubernetes.io/component. */}}
{{- define "spreadwatch.labels" -}}
helm.sh/chart: {{ include "spreadwatch.chart" . }}
{{ include "spreadwatch.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: spreadwatch
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* ServiceAccount name. */}}
{{- define "spreadwatch.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "spreadwatch.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Image reference: [registry/]repository@digest when image.digest is set, else [registry/]repository:tag, the
     tag defaulting to the chart's appVersion; the registry is global.imageRegistry, else image.registry. */}}
{{- define "spreadwatch.image" -}}
{{- $registry := default .Values.image.registry (.Values.global).imageRegistry }}
{{- $repository := ternary (printf "%s/%s" $registry .Values.image.repository) .Values.image.repository (ne $registry "") }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Lease name. */}}
{{- define "spreadwatch.leaseName" -}}
{{- default (printf "%s-leader" (include "spreadwatch.fullname" .)) .Values.leaderElection.leaseName | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* "true" when RBAC is per namespace (rbac.namespaced, or watchNamespaces given). */}}
{{- define "spreadwatch.namespaced" -}}
{{- if or .Values.rbac.namespaced .Values.watchNamespaces }}true{{ end }}
{{- end }}

{{/* Watched namespaces as a JSON list: watchNamespaces; in namespaced mode without it, the release namespace;
     [] for all namespaces. */}}
{{- define "spreadwatch.watchNamespaces" -}}
{{- if .Values.watchNamespaces }}
{{- .Values.watchNamespaces | uniq | toJson }}
{{- else if .Values.rbac.namespaced }}
{{- list .Release.Namespace | toJson }}
{{- else }}
{{- list | toJson }}
{{- end }}
{{- end }}

{{/* Monitoring CRDs served (prometheus-operator). */}}
{{- define "spreadwatch.monitoringApi" -}}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}true{{ end }}
{{- end }}

{{/* The `spreadwatch run` flags from the values, as a YAML list (the image's ENTRYPOINT is `spreadwatch run`).
     Integers go through `int` (Helm reads numbers as float64, and %v of 1000000.0 is 1e+06). */}}
{{- define "spreadwatch.args" -}}
{{- $v := .Values }}
{{- $args := list }}
{{- range (include "spreadwatch.watchNamespaces" . | fromJsonArray) }}
{{- $args = append $args (printf "--namespace=%s" .) }}
{{- end }}
{{- range (uniq $v.skipNamespaces) }}
{{- $args = append $args (printf "--skip-namespace=%s" .) }}
{{- end }}
{{- $args = append $args (printf "--opt-out-label=%s" $v.optOutLabel) }}
{{- $args = append $args (printf "--profile=%s" $v.profile) }}
{{- $args = append $args (printf "--compare-profile=%s" (default "none" $v.compareProfile)) }}
{{- if $v.schedulerConfig }}
{{- $args = append $args "--scheduler-config=/etc/spreadwatch/scheduler-config.yaml" }}
{{- $args = append $args (printf "--scheduler-name=%s" $v.schedulerName) }}
{{- end }}
{{- $args = append $args (printf "--debounce=%v" $v.debounce) }}
{{- $args = append $args (printf "--top-nodes=%d" (int $v.topN)) }}
{{- $args = append $args (printf "--max-report-nodes=%d" (int $v.maxReportNodes)) }}
{{- $args = append $args (printf "--window-samples=%d" (int $v.windowSamples)) }}
{{- $args = append $args (ternary "--prediction" "--no-prediction" $v.prediction) }}
{{- $args = append $args (printf "--max-node-skew=%d" (int $v.health.maxNodeSkew)) }}
{{- $args = append $args (printf "--max-zone-skew=%d" (int $v.health.maxZoneSkew)) }}
{{- $args = append $args (printf "--spof-min-pods=%d" (int $v.health.spofMinPods)) }}
{{- $args = append $args (printf "--max-writes-per-second=%v" $v.writes.perSecond) }}
{{- $args = append $args (printf "--write-burst=%d" (int $v.writes.burst)) }}
{{- $args = append $args (printf "--max-writes-in-flight=%d" (int $v.writes.maxInFlight)) }}
{{- $args = append $args (printf "--resync-period=%v" $v.resyncPeriod) }}
{{- $args = append $args (printf "--port=%d" (int $v.probes.port)) }}
{{- $args = append $args (printf "--metrics-port=%d" (int $v.metrics.port)) }}
{{- $args = append $args (printf "--metrics-secure=%t" $v.metrics.secure) }}
{{- if $v.metrics.certSecret }}
{{- $args = append $args (printf "--metrics-cert-dir=%s" (include "spreadwatch.metricsCertDir" .)) }}
{{- end }}
{{- $args = append $args "--bind-address=0.0.0.0" }}
{{- $args = append $args (printf "--log-format=%s" $v.logFormat) }}
{{- $args = append $args (printf "--log-level=%s" $v.logLevel) }}
{{- $args = append $args (printf "--node-metrics=%s" $v.metrics.nodeSeries) }}
{{- $args = append $args (ternary "--events" "--no-events" $v.events) }}
{{- if $v.leaderElection.enabled }}
{{- $args = append $args "--leader-elect" }}
{{- $args = append $args (printf "--lease-name=%s" (include "spreadwatch.leaseName" .)) }}
{{- $args = append $args (printf "--lease-namespace=%s" .Release.Namespace) }}
{{- $args = append $args (printf "--lease-duration=%v" $v.leaderElection.leaseDuration) }}
{{- $args = append $args (printf "--renew-period=%v" $v.leaderElection.renewPeriod) }}
{{- else }}
{{- $args = append $args "--no-leader-elect" }}
{{- end }}
{{- range $v.extraArgs }}
{{- $args = append $args . }}
{{- end }}
{{- toYaml $args }}
{{- end }}

{{/* Where the metrics.certSecret Secret is mounted. */}}
{{- define "spreadwatch.metricsCertDir" -}}
/etc/spreadwatch/metrics-cert
{{- end }}

{{/* Rules for the reports the operator writes and the Events about them (cluster-wide or per namespace). */}}
{{- define "spreadwatch.reportRules" }}
- apiGroups: ["spreadwatch.io"]
  resources: ["spreadreports"]
  verbs: ["get", "list", "create", "patch", "delete"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
{{- end }}
