# syntax=docker/dockerfile:1
# Build: docker build -t resource-distributor:0.1.0 .

FROM node:20-alpine AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:20-alpine AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Read at startup: admission validates against the same schema the API server enforces.
COPY webhook-config/crd ./webhook-config/crd
# The "node" user of the base image (uid 1000); the Deployment may pick another non-root uid.
USER 1000:1000
EXPOSE 9443
CMD ["node", "dist/main.js"]
