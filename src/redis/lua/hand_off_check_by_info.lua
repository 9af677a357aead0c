--@run_id_from_info
if marker == false or not run_id or string.sub(marker, 1, #run_id + 1) ~= run_id .. ':' then
