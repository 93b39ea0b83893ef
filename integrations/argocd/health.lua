-- Argo CD health check for ResourceDistribution (apps.kruise.io), in the form argocd-cm's
-- resource.customizations.health.apps.kruise.io_ResourceDistribution takes (Lua 5.1, as Argo CD's
-- gopher-lua runs it; `obj` is the object). It reads what kstatus reads, so Argo CD and Flux agree:
--   Progressing  the status does not describe this generation yet, or a failure is being retried
--                (Ready False, Stalled False)
--   Degraded     Stalled True: a failure waits on someone (a conflict, a missing namespace or
--                source, an author without access, a write the API server refused)
--   Healthy      Ready True: every target holds a correct copy
-- A status without Ready (OpenKruise's own controller writes only its six failure conditions) is
-- Degraded while one of them is True, else Healthy once the generation is observed.
local hs = {}

local function condition(conditions, type)
  for _, c in ipairs(conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local function said(c, default)
  if c.message ~= nil and c.message ~= "" then
    return c.message
  end
  if c.reason ~= nil and c.reason ~= "" then
    return c.reason
  end
  return default
end

local status = obj.status
if status == nil or status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the first status"
  return hs
end

local generation = obj.metadata.generation
if generation ~= nil and status.observedGeneration ~= generation then
  hs.status = "Progressing"
  hs.message = "Waiting for generation " .. tostring(generation) .. " to be distributed"
  if status.observedGeneration ~= nil then
    hs.message = hs.message .. " (the status describes " .. tostring(status.observedGeneration) .. ")"
  end
  return hs
end

local stalled = condition(status.conditions, "Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = said(stalled, "Stalled")
  return hs
end

local ready = condition(status.conditions, "Ready")
if ready ~= nil then
  if ready.status == "True" then
    hs.status = "Healthy"
  else
    hs.status = "Progressing"
  end
  hs.message = said(ready, "Ready " .. tostring(ready.status))
  return hs
end

for _, c in ipairs(status.conditions) do
  if c.status == "True" then
    hs.status = "Degraded"
    hs.message = c.type .. ": " .. said(c, c.type)
    return hs
  end
end
hs.status = "Healthy"
hs.message = tostring(status.succeeded or 0) .. " of " .. tostring(status.desired or 0) .. " targets hold a correct copy"
return hs
