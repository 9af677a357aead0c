{{/*
redlockd beside an app, for the app's own chart. Each template takes a dict:
  Values   the sidecar's settings (defaults in _defaults.tpl), e.g. .Values.redlockd
  Release  .Release (configMap, redisSecret: their namespace)
  labels   more metadata labels (optional)
  sidecar  false: a plain container (the redlockd chart's Deployment)
In the app's pod template:
  metadata.labels:      {{ include "redlockd-sidecar.podLabels" . }}
  metadata.annotations: {{ include "redlockd-sidecar.checksum" $args }} (rolls pods on a config change)
  spec.initContainers:  {{ include "redlockd-sidecar.container" $args }}
  spec.volumes:         {{ include "redlockd-sidecar.volumes" $args }}
and as documents: redlockd-sidecar.configMap, redlockd-sidecar.redisSecret.
The pods also need terminationGracePeriodSeconds above server.shutdown_grace
plus the app's own shutdown.
*/}}

{{/* Admits the pod to the masters (their NetworkPolicy). */}}
{{- define "redlockd-sidecar.podLabels" -}}
redlockd-client: "true"
{{- end }}

{{/* REDLOCKD__REDIS__NODES: the positions, checked for an odd count of 3-15. */}}
{{- define "redlockd-sidecar.nodes" -}}
{{- $r := .redis }}
{{- $nodes := $r.nodes | default list }}
{{- if not $nodes }}
{{- $m := $r.masters }}
{{- range $i := until (int $m.replicas) }}
{{- $nodes = append $nodes (printf "redis://%s:$(REDIS_PASSWORD)@%s-%d.%s.%s.svc.%s:%d" $r.user $m.name $i $m.name $m.namespace $m.clusterDomain (int $m.port)) }}
{{- end }}
{{- end }}
{{- $n := len $nodes }}
{{- if or (lt $n 3) (gt $n 15) (eq (mod $n 2) 0) }}
{{- fail (printf "redlockd: %d Redis positions; redis.nodes needs an odd number from 3 to 15 (docs/configuration.md#settings)" $n) }}
{{- end }}
{{- join "," $nodes }}
{{- end }}

{{- define "redlockd-sidecar.port" -}}
{{- regexReplaceAll "^.*:" . "" }}
{{- end }}

{{- define "redlockd-sidecar.container" -}}
{{- $v := include "redlockd-sidecar.values" . | fromYaml }}
{{- $tls := $v.tls.secret -}}
- name: redlockd
  image: {{ $v.image }}
  {{- with $v.imagePullPolicy }}
  imagePullPolicy: {{ . }}
  {{- end }}
  {{- if or (not (hasKey . "sidecar")) .sidecar }}
  # A native sidecar: starts before the app, stops after it.
  restartPolicy: Always
  {{- end }}
  args: ["--config", "/etc/redlockd/redlockd.toml"]
  env:
    - name: REDIS_PASSWORD
      valueFrom:
        secretKeyRef:
          name: {{ $v.redis.secret }}
          key: password
    # In index order: never reorder on a running cluster.
    - name: REDLOCKD__REDIS__NODES
      value: {{ include "redlockd-sidecar.nodes" $v | quote }}
    - name: REDLOCKD__SERVER__LISTEN
      value: {{ $v.listen | quote }}
    - name: REDLOCKD__METRICS__LISTEN
      value: {{ $v.metricsListen | quote }}
    {{- if $tls }}
    - name: REDLOCKD__SERVER__TLS_CERT_FILE
      value: /etc/redlockd-tls/tls.crt
    - name: REDLOCKD__SERVER__TLS_KEY_FILE
      value: /etc/redlockd-tls/tls.key
    {{- if $v.tls.clientCA }}
    - name: REDLOCKD__SERVER__TLS_CLIENT_CA_FILE
      value: /etc/redlockd-tls/ca.crt
    {{- end }}
    {{- end }}
    {{- if $v.redis.tlsCASecret }}
    - name: REDLOCKD__REDIS__TLS_CA_FILE
      value: /etc/redlockd-redis-ca/ca.crt
    {{- end }}
    {{- if $v.auth.tokensSecret }}
    - name: REDLOCKD__AUTH__TOKENS_FILE
      value: /etc/redlockd-auth/{{ $v.auth.tokensKey }}
    {{- end }}
    {{- range $v.auth.tokenEnv }}
    - name: {{ .name }}
      valueFrom:
        secretKeyRef:
          name: {{ .secret }}
          key: {{ .key }}
    {{- end }}
    {{- with $v.otlp.endpoint }}
    - name: REDLOCKD__TELEMETRY__OTLP__ENDPOINT
      value: {{ . | quote }}
    {{- end }}
    {{- with $v.otlp.sampleRatio }}
    - name: REDLOCKD__TELEMETRY__OTLP__SAMPLE_RATIO
      value: {{ . | toString | quote }}
    {{- end }}
    {{- with $v.env }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    - name: grpc
      containerPort: {{ include "redlockd-sidecar.port" $v.listen }}
      protocol: TCP
    - name: metrics
      containerPort: {{ include "redlockd-sidecar.port" $v.metricsListen }}
      protocol: TCP
  # Both ports are bound together: the app starts after this passes.
  startupProbe:
    httpGet:
      path: /metrics
      port: metrics
    periodSeconds: 1
    failureThreshold: 30
  {{- if $v.readinessProbe }}
  # SERVING only while a quorum of masters is usable.
  readinessProbe:
    {{- if $tls }}
    tcpSocket:
      port: grpc
    {{- else }}
    grpc:
      port: {{ include "redlockd-sidecar.port" $v.listen }}
    {{- end }}
    periodSeconds: 5
    timeoutSeconds: 2
    failureThreshold: 2
  {{- end }}
  # The service "liveness": SERVING while the process serves, whatever Redis does.
  livenessProbe:
    {{- if $tls }}
    tcpSocket:
      port: grpc
    {{- else }}
    grpc:
      port: {{ include "redlockd-sidecar.port" $v.listen }}
      service: liveness
    {{- end }}
    periodSeconds: 10
    timeoutSeconds: 3
    failureThreshold: 3
  resources:
    {{- toYaml $v.resources | nindent 4 }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    allowPrivilegeEscalation: false
    readOnlyRootFilesystem: true
    capabilities:
      drop: ["ALL"]
  volumeMounts:
    - name: redlockd-config
      mountPath: /etc/redlockd
      readOnly: true
    {{- if $tls }}
    - name: redlockd-tls
      mountPath: /etc/redlockd-tls
      readOnly: true
    {{- end }}
    {{- if $v.redis.tlsCASecret }}
    - name: redlockd-redis-ca
      mountPath: /etc/redlockd-redis-ca
      readOnly: true
    {{- end }}
    {{- if $v.auth.tokensSecret }}
    - name: redlockd-auth
      mountPath: /etc/redlockd-auth
      readOnly: true
    {{- end }}
{{- end }}

{{- define "redlockd-sidecar.volumes" -}}
{{- $v := include "redlockd-sidecar.values" . | fromYaml -}}
- name: redlockd-config
  configMap:
    name: {{ $v.configMap }}
{{- with $v.tls.secret }}
- name: redlockd-tls
  secret:
    secretName: {{ . }}
{{- end }}
{{- with $v.redis.tlsCASecret }}
- name: redlockd-redis-ca
  secret:
    secretName: {{ . }}
{{- end }}
{{- with $v.auth.tokensSecret }}
- name: redlockd-auth
  secret:
    secretName: {{ . }}
{{- end }}
{{- end }}

{{/* redlockd.toml: `config` with the OTLP setting. */}}
{{- define "redlockd-sidecar.configToml" -}}
{{- $v := include "redlockd-sidecar.values" . | fromYaml }}
{{- include "redlockd-sidecar.toml" $v.config }}
{{- end }}

{{- define "redlockd-sidecar.checksum" -}}
checksum/redlockd-config: {{ include "redlockd-sidecar.configToml" . | sha256sum }}
{{- end }}

{{- define "redlockd-sidecar.configMap" -}}
{{- $v := include "redlockd-sidecar.values" . | fromYaml -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $v.configMap }}
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/name: redlockd
    {{- with .labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
data:
  redlockd.toml: |
    {{- include "redlockd-sidecar.configToml" . | nindent 4 }}
{{- end }}

{{/* The Secret with the masters' password: as given, else the one already
in the namespace (the masters' is in theirs, and a random one here would
differ). */}}
{{- define "redlockd-sidecar.redisSecret" -}}
{{- $v := include "redlockd-sidecar.values" . | fromYaml }}
{{- $password := $v.redis.password }}
{{- if not $password }}
{{- $old := lookup "v1" "Secret" .Release.Namespace $v.redis.secret }}
{{- $password = dig "data" "password" "" $old | b64dec }}
{{- end -}}
apiVersion: v1
kind: Secret
metadata:
  name: {{ $v.redis.secret }}
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/name: redlockd
    {{- with .labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
type: Opaque
stringData:
  {{- if not $password }}
  {{- fail (printf "redlockd: set the masters' password (redis.password of the redlockd chart, or its Secret %s in their namespace) as redlockd.redis.password" $v.redis.secret) }}
  {{- end }}
  password: {{ $password | quote }}
{{- end }}
