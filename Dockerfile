# homeostat's image: Node 24, non-root, production dependencies only, with the prebuilt workflow
# bundle. The build stage runs the same commands CI runs (npm ci, npm run build, npm run bundle).
# Run: docker run ghcr.io/homeostat-dev/homeostat worker | bridge | api | all | crds

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm run bundle

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOMEOSTAT_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
# The image's node user, by number: Kubernetes' runAsNonRoot can only check a numeric user.
USER 1000:1000
EXPOSE 8080
ENTRYPOINT ["node", "dist/cli/homeostat.js"]
CMD ["--help"]
