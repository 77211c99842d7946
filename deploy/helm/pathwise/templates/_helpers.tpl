{{/* SPDX-License-Identifier: Apache-2.0 */}}
{{/* The app.kubernetes.io/name label: the chart's name unless overridden. */}}
{{- define "pathwise.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' names: the release name when it contains the chart's
     name (release "pathwise" gives the base's names), else RELEASE-NAME. */}}
{{- define "pathwise.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "pathwise.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* What selects the agent's pods. The base's only label: no Helm labels
     are added, so the chart's objects are the base's (commonLabels adds
     any a user wants). */}}
{{- define "pathwise.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pathwise.name" . }}
{{- end -}}

{{- define "pathwise.labels" -}}
{{ include "pathwise.selectorLabels" . }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "pathwise.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.registry -}}
{{- printf "%s/%s:%s" .Values.image.registry .Values.image.repository $tag -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}
