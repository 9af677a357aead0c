{{/* redlockd.toml from a map of sections (a map in a section is a
subtable: telemetry.otlp). A null value leaves the setting out. */}}
{{- define "redlockd-sidecar.toml" -}}
{{- range $name, $table := . }}
{{- include "redlockd-sidecar.tomlTable" (dict "name" $name "table" $table) }}
{{- end }}
{{- end }}

{{- define "redlockd-sidecar.tomlTable" -}}
{{- printf "[%s]\n" .name }}
{{- range $key, $value := .table }}
{{- if not (or (kindIs "map" $value) (kindIs "invalid" $value)) }}
{{- printf "%s = %s\n" $key (include "redlockd-sidecar.tomlValue" $value) }}
{{- end }}
{{- end }}
{{- range $key, $value := .table }}
{{- if kindIs "map" $value }}
{{- include "redlockd-sidecar.tomlTable" (dict "name" (printf "%s.%s" $.name $key) "table" $value) }}
{{- end }}
{{- end }}
{{- end }}

{{- define "redlockd-sidecar.tomlValue" -}}
{{- if kindIs "string" . }}{{ toJson . }}
{{- else if kindIs "bool" . }}{{ . }}
{{- else if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) }}
{{- if eq (float64 .) (floor .) }}{{ int64 . }}{{ else }}{{ . }}{{ end }}
{{- else if kindIs "slice" . }}[{{ range $i, $v := . }}{{ if $i }}, {{ end }}{{ include "redlockd-sidecar.tomlValue" $v }}{{ end }}]
{{- else }}{{ fail (printf "redlockd: %v cannot be written to redlockd.toml" .) }}
{{- end }}
{{- end }}
