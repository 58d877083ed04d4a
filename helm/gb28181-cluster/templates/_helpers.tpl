{{- /*
Only Go text/template built-ins are used in this chart (no Sprig, no include/toYaml/nindent), so the
chart renders the same under `helm template` and under the plain Go template engine the tests use
(helm/src/render.ts). Consequences: label sets are written as YAML flow maps on one line, names are
written in place with `template`, and a required value that is missing stops the render with
`template "gb.fail: ..."`, which names the missing value in the error (Go reports the unknown
template name).
*/ -}}

{{- define "gb.name" -}}
{{ if .Values.nameOverride }}{{ .Values.nameOverride }}{{ else }}{{ .Chart.Name }}{{ end }}
{{- end }}

{{- define "gb.fullname" -}}
{{ if .Values.fullnameOverride }}{{ .Values.fullnameOverride }}{{ else if eq .Release.Name .Chart.Name }}{{ .Release.Name }}{{ else }}{{ .Release.Name }}-{{ .Chart.Name }}{{ end }}
{{- end }}

{{- /* Common label pairs, without the braces: a manifest writes the flow map around them and adds its component. */ -}}
{{- define "gb.labelPairs" -}}
app.kubernetes.io/name: {{ template "gb.name" . }}, app.kubernetes.io/instance: {{ printf "%q" .Release.Name }}, app.kubernetes.io/version: {{ printf "%q" .Chart.AppVersion }}, app.kubernetes.io/managed-by: {{ printf "%q" .Release.Service }}, helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "gb.selectorPairs" -}}
app.kubernetes.io/name: {{ template "gb.name" . }}, app.kubernetes.io/instance: {{ printf "%q" .Release.Name }}
{{- end }}

{{- define "gb.image" -}}
{{ printf "%q" (printf "%s:%s" .Values.image.repository (or .Values.image.tag .Chart.AppVersion)) }}
{{- end }}

{{- /* The chart-owned Secret exists unless everything comes from secrets.existingSecret. */ -}}
{{- define "gb.secretName" -}}
{{ if .Values.secrets.existingSecret }}{{ .Values.secrets.existingSecret }}{{ else }}{{ template "gb.fullname" . }}{{ end }}
{{- end }}

{{- define "gb.storesSecretName" -}}
{{ template "gb.fullname" . }}-stores
{{- end }}

{{- define "gb.podSecurityContext" -}}
{runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: {type: RuntimeDefault}}
{{- end }}

{{- define "gb.containerSecurityContext" -}}
{allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
{{- end }}

{{- /* Checks of required values: each stops the render naming what is missing. */ -}}
{{- define "gb.checks" -}}
{{- if not .Values.secrets.existingSecret }}
{{- if not .Values.secrets.nodeForwardSecret }}{{ template "gb.fail: set secrets.nodeForwardSecret (or secrets.existingSecret)" }}{{ end }}
{{- if not .Values.secrets.signingKey }}{{ template "gb.fail: set secrets.signingKey, at least 32 bytes (or secrets.existingSecret)" }}{{ end }}
{{- end }}
{{- if and (eq .Values.signaling.sip.exposure "service") (not .Values.signaling.sip.service.pods) }}{{ template "gb.fail: sip.exposure=service needs signaling.sip.service.pods, one {address, port} per pod" }}{{ end }}
{{- if not (or (eq .Values.signaling.sip.exposure "service") (eq .Values.signaling.sip.exposure "hostNetwork")) }}{{ template "gb.fail: signaling.sip.exposure must be hostNetwork or service" }}{{ end }}
{{- if and .Values.redis.bundled.enabled (or .Values.redis.url .Values.redis.fromExistingSecret) }}{{ template "gb.fail: redis: bundled and url/fromExistingSecret exclude each other" }}{{ end }}
{{- if and .Values.mysql.bundled.enabled (or .Values.mysql.url .Values.mysql.fromExistingSecret) }}{{ template "gb.fail: mysql: bundled and url/fromExistingSecret exclude each other" }}{{ end }}
{{- if and .Values.mysql.bundled.enabled (not (and .Values.mysql.bundled.password .Values.mysql.bundled.rootPassword)) }}{{ template "gb.fail: set mysql.bundled.password and mysql.bundled.rootPassword" }}{{ end }}
{{- if and .Values.sipEdge.enabled (not .Values.secrets.existingSecret) (not .Values.secrets.edgeFlowSecret) }}{{ template "gb.fail: sipEdge needs secrets.edgeFlowSecret, at least 16 bytes (or secrets.existingSecret)" }}{{ end }}
{{- if and .Values.sipEdge.enabled (not (or .Values.mysql.url .Values.mysql.bundled.enabled .Values.mysql.fromExistingSecret)) }}{{ template "gb.fail: sipEdge reads the node table: it needs MySQL (mysql.url, bundled or fromExistingSecret)" }}{{ end }}
{{- if and (or .Values.redis.fromExistingSecret .Values.mysql.fromExistingSecret) (not .Values.secrets.existingSecret) }}{{ template "gb.fail: fromExistingSecret needs secrets.existingSecret" }}{{ end }}
{{- end }}
