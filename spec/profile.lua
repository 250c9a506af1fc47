-- The busted helper of .busted's tasks (busted --run=cpu): the backend the specs run on,
-- passed to helper.lua as LACC_TEST_BACKENDS would pass it (the task wins over the
-- variable: it is the more explicit of the two).
local backend = arg and arg[1]
if backend and backend ~= "" then
  package.loaded["lacc.test_profile"] = { backends = backend }
end
