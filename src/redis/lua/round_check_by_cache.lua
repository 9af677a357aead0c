  -- The script cache proves the process: nothing to check until a
  -- counter is missing (a bucket found unverified in the batch stays so).
  local verified = checked[fence] or 1
