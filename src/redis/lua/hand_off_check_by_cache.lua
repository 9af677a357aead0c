if marker == false then
