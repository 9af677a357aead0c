  -- ROUND's check, once per bucket of a batch (`checked`), that the
  -- bucket's marker names the running process (`verified`: 1, or -1
  -- without a marker, -2 naming another process), with `INFO` read once
  -- per batch (`process`, empty when unreadable: fails closed).
  local verified = checked[fence]
  if verified == nil then
    local named = redis.call('GET', start_of(key) .. 'verified')
    verified = -1
    if named ~= false then
      if process == nil then
--@run_id_from_info
        process = run_id or ''
      end
      if process ~= '' and string.sub(named, 1, #process + 1) == process .. ':' then
        verified = 1
      else
        verified = -2
      end
    end
    checked[fence] = verified
  end
