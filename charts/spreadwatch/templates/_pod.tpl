{{/* The pod's securityContext: the hardened defaults, each key replaced by the same key of podSecurityContext. */}}
{{- define "spreadwatch.podSecurityContext" -}}
{{- $sc := dict "runAsNonRoot" true "runAsUser" (int .Values.runAsUser) "runAsGroup" (int .Values.runAsGroup)
      "fsGroup" (int .Values.runAsGroup) "seccompProfile" (dict "type" "RuntimeDefault") }}
{{- range $key, $value := .Values.podSecurityContext }}
{{- $_ := set $sc $key $value }}
{{- end }}
{{- toYaml $sc }}
{{- end }}

{{/* The container's securityContext: the hardened defaults, each key replaced by the same key of
     containerSecurityContext (so `capabilities` given there replaces the whole default `capabilities`). */}}
{{- define "spreadwatch.containerSecurityContext" -}}
{{- $sc := dict "runAsNonRoot" true "runAsUser" (int .Values.runAsUser) "runAsGroup" (int .Values.runAsGroup)
      "readOnlyRootFilesystem" true "allowPrivilegeEscalation" false "privileged" false
      "capabilities" (dict "drop" (list "ALL")) "seccompProfile" (dict "type" "RuntimeDefault") }}
{{- range $key, $value := .Values.containerSecurityContext }}
{{- $_ := set $sc $key $value }}
{{- end }}
{{- toYaml $sc }}
{{- end }}

{{/* The container's volume mounts as a YAML list: /tmp (tmpDir.enabled), the metrics certificate
     (metrics.certSecret), the scheduler configuration (schedulerConfig) and extraVolumeMounts; empty: none. */}}
{{- define "spreadwatch.volumeMounts" -}}
{{- $mounts := list }}
{{- if .Values.tmpDir.enabled }}
{{- $mounts = append $mounts (dict "name" "tmp" "mountPath" "/tmp") }}
{{- end }}
{{- if .Values.metrics.certSecret }}
{{- $mounts = append $mounts (dict "name" "metrics-cert" "mountPath" (include "spreadwatch.metricsCertDir" .) "readOnly" true) }}
{{- end }}
{{- if .Values.schedulerConfig }}
{{- $mounts = append $mounts (dict "name" "scheduler-config" "mountPath" "/etc/spreadwatch" "readOnly" true) }}
{{- end }}
{{- $mounts = concat $mounts .Values.extraVolumeMounts }}
{{- if $mounts }}{{ toYaml $mounts }}{{ end }}
{{- end }}

{{/* The pod's volumes as a YAML list: the /tmp emptyDir (tmpDir.enabled), the metrics certificate Secret
     (metrics.certSecret), the scheduler configuration ConfigMap (schedulerConfig) and extraVolumes; empty: none. */}}
{{- define "spreadwatch.volumes" -}}
{{- $volumes := list }}
{{- if .Values.tmpDir.enabled }}
{{- $emptyDir := dict "sizeLimit" .Values.tmpDir.sizeLimit }}
{{- with .Values.tmpDir.medium }}
{{- $_ := set $emptyDir "medium" . }}
{{- end }}
{{- $volumes = append $volumes (dict "name" "tmp" "emptyDir" $emptyDir) }}
{{- end }}
{{- if .Values.metrics.certSecret }}
{{- $items := list (dict "key" "tls.crt" "path" "tls.crt") (dict "key" "tls.key" "path" "tls.key") }}
{{- $volumes = append $volumes (dict "name" "metrics-cert" "secret" (dict "secretName" .Values.metrics.certSecret "items" $items)) }}
{{- end }}
{{- if .Values.schedulerConfig }}
{{- $configMap := dict "name" (printf "%s-scheduler-config" (include "spreadwatch.fullname" .)) }}
{{- $volumes = append $volumes (dict "name" "scheduler-config" "configMap" $configMap) }}
{{- end }}
{{- $volumes = concat $volumes .Values.extraVolumes }}
{{- if $volumes }}{{ toYaml $volumes }}{{ end }}
{{- end }}

{{/* topologySpreadConstraints as a YAML list; a constraint without labelSelector selects the operator's pods. */}}
{{- define "spreadwatch.topologySpreadConstraints" -}}
{{- $constraints := list }}
{{- range .Values.topologySpreadConstraints }}
{{- $constraint := deepCopy . }}
{{- if not (hasKey $constraint "labelSelector") }}
{{- $_ := set $constraint "labelSelector" (dict "matchLabels" (include "spreadwatch.selectorLabels" $ | fromYaml)) }}
{{- end }}
{{- $constraints = append $constraints $constraint }}
{{- end }}
{{- if $constraints }}{{ toYaml $constraints }}{{ end }}
{{- end }}
