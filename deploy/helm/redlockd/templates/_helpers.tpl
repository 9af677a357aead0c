{{/* Labels Helm's tools expect, on each object's metadata (never on a pod
template or a selector: a new chart version must not restart masters). */}}
{{- define "redlockd.labels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "redlockd.mastersSelector" -}}
app.kubernetes.io/name: redis
app.kubernetes.io/part-of: redlockd
{{- end }}

{{- define "redlockd.standaloneSelector" -}}
app.kubernetes.io/name: redlockd
app.kubernetes.io/component: standalone
{{- end }}

{{/* The redlockd-sidecar library's settings for this release's redlockd:
.Values.redlockd with the Redis positions and Secrets of this chart. */}}
{{- define "redlockd.sidecarValues" -}}
{{- $v := deepCopy .Values.redlockd }}
{{- $masters := dict "name" .Values.masters.name "namespace" .Release.Namespace "replicas" .Values.masters.replicas "clusterDomain" .Values.redis.clusterDomain }}
{{- $_ := set $v "redis" (dict "secret" .Values.redis.secret "nodes" .Values.redis.nodes "tlsCASecret" .Values.redis.tlsCASecret "masters" $masters) }}
{{- $auth := $v.auth | default dict }}
{{- if and $auth.tokensFile (not $auth.tokensSecret) }}
{{- $_ := set $auth "tokensSecret" "redlockd-tenants" }}
{{- end }}
{{- $_ := set $v "auth" $auth }}
{{- toYaml $v }}
{{- end }}

{{- define "redlockd.sidecarArgs" -}}
{{- $labels := include "redlockd.labels" . | fromYaml }}
{{- toYaml (dict "Values" (include "redlockd.sidecarValues" . | fromYaml) "sidecar" false "labels" $labels) }}
{{- end }}

{{/* Fails on settings that cannot work together. */}}
{{- define "redlockd.check" -}}
{{- $v := include "redlockd-sidecar.values" (dict "Values" .Values.redlockd) | fromYaml }}
{{- if and .Values.masters.enabled (ne $v.config.redis.key_prefix "redlockd") }}
{{- fail "redlockd: the masters' ACL allows the keys redlockd:* only; keep redlockd.config.redis.key_prefix = redlockd, or run your own masters (redis.nodes)" }}
{{- end }}
{{- if and .Values.standalone.enabled (not .Values.masters.enabled) (not .Values.redis.nodes) }}
{{- fail "redlockd: the standalone redlockd needs masters: masters.enabled, or their URLs in redis.nodes" }}
{{- end }}
{{- if and .Values.masters.enabled (not .Values.redis.nodes) (or (lt (int .Values.masters.replicas) 3) (eq (mod (int .Values.masters.replicas) 2) 0)) }}
{{- fail (printf "redlockd: masters.replicas is %v; Redlock needs an odd number of masters, 3 to 15" .Values.masters.replicas) }}
{{- end }}
{{- end }}
